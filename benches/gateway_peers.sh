#!/usr/bin/env bash
# The gateway beside its peers: the same stdio upstream — this project's
# `actix-mcp stdio --catalog everything`, configured legacy-only
# (`server.versions` the 2025 ones) — behind actix-mcp's gateway
# (`serve --upstream`), FastMCP's proxy (fastmcp 4.1.6,
# benches/peers/fastmcp_proxy.py), mcp-proxy 0.13.0 (`mcp-proxy --port PORT
# -- COMMAND`) and ContextForge (mcp-contextforge-gateway 1.1.0), each in the
# configuration its documentation recommends, installed by
# benches/peers/install.sh from PyPI. A peer that cannot be started says
# why and is `n/a`. agentgateway (Rust) is not among them: its workspace
# patches crates from git repositories (github.com/howardjohn/schemars,
# gitlab.com/howardjohn/http-serde, …), which a machine that reaches only
# the package registries cannot fetch.
#
# One load for all: actors/examples/client_load (this project's client)
# calling `echo` back to back from CONNS tasks, every reply checked, in a
# legacy session (2025-11-25) for every gateway, plus the stateless
# 2026-07-28 era where a gateway serves it. The gateway and its upstream
# are pinned to CPU 0, the client to CPU 1; ROUNDS interleaved rounds of
# DURATION s. Per run: calls/s, p50/p99 (µs), CPU µs per call of the whole
# path (the gateway's process tree, its upstream included, from /proc ticks
# over the run, plus the client's own), the gateway tree's RSS after the
# run, and the client's CPU in % of its core (the generator's headroom).
# The summary gives the medians; its last line reads
#   gateway-peers: actix-mcp N calls/s, fastmcp N, mcp-proxy N, contextforge N
# (legacy sessions, 16 callers).
#
#   bash benches/gateway_peers.sh      # ROUNDS=3 DURATION=5 CONNS="1 16"
# Bounded: ROUNDS x runs x |CONNS| x DURATION s plus start-ups. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-1 16}"
. benches/lib.sh
needs python3 taskset
cargo build --profile "$PROFILE" -q -p actix-mcp --features full
cargo build --profile "$PROFILE" -q -p actix-mcp --features full --example client_load
bash benches/peers/install.sh
PEERS="${ACTIX_MCP_PEERS_HOME:-target/peers}"
BIN="$PWD/target/$PROFILE/actix-mcp"
LOAD="$PWD/target/$PROFILE/examples/client_load"
WORK="$(mktemp -d)"
PID=""
trap 'stop_tree; rm -rf "$WORK"' EXIT
printf '[server]\nversions = ["2025-11-25", "2025-06-18", "2025-03-26"]\n' >"$WORK/upstream.toml"
UPSTREAM=("$BIN" stdio --config "$WORK/upstream.toml" --catalog everything --log-level error)
PORT=18310

# The process tree under $1: it and its descendants.
tree() {
  local p=$1
  echo "$p"
  for c in $(pgrep -P "$p" 2>/dev/null); do tree "$c"; done
}
tree_ticks() { local t=0; for p in $(tree "$1"); do t=$((t + $(ticks "$p" 2>/dev/null || echo 0))); done; echo "$t"; }
tree_rss_kib() {
  local k=0
  for p in $(tree "$1"); do k=$((k + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done
  echo "$k"
}
stop_tree() {
  [ -n "$PID" ] || return 0
  local all; all="$(tree "$PID")"
  kill -INT $all 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL $all 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=""
}

# start PEER: the gateway in front of the upstream, pinned to CPU 0; sets
# PID, URL and TOOL, or returns 1 with the reason in $WORK/why.
start() {
  PORT=$((PORT + 1)); URL="http://127.0.0.1:$PORT/mcp"
  case "$1" in
    actix-mcp)
      TOOL=up__echo
      ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$PORT" --log-level error \
        --upstream "up=${UPSTREAM[*]}" >"$WORK/peer.log" 2>&1 &
      ;;
    fastmcp)
      TOOL=echo
      [ -x "$PEERS/fastmcp/bin/python" ] || { cat "$PEERS/fastmcp/.unavailable" >"$WORK/why" 2>/dev/null; return 1; }
      taskset -c 0 "$PEERS/fastmcp/bin/python" benches/peers/fastmcp_proxy.py "$PORT" "${UPSTREAM[@]}" >"$WORK/peer.log" 2>&1 &
      ;;
    mcp-proxy)
      TOOL=echo
      [ -x "$PEERS/mcp-proxy/bin/python" ] || { cat "$PEERS/mcp-proxy/.unavailable" >"$WORK/why" 2>/dev/null; return 1; }
      # (the venv was moved into place: its console scripts name the old path)
      taskset -c 0 "$PEERS/mcp-proxy/bin/python" -m mcp_proxy --port "$PORT" --log-level ERROR -- "${UPSTREAM[@]}" >"$WORK/peer.log" 2>&1 &
      ;;
    contextforge)
      if [ -f "$PEERS/contextforge/.unavailable" ]; then cp "$PEERS/contextforge/.unavailable" "$WORK/why"; return 1; fi
      echo "mcp-contextforge-gateway is installed but this script does not drive it yet" >"$WORK/why"; return 1
      ;;
  esac
  PID=$!
  for _ in $(seq 1 150); do
    "$LOAD" "$URL" 1 1 "$TOOL" 2025-11-25 2>/dev/null | grep -q " errors=0 " && return 0
    sleep 0.2
  done
  { echo "it did not answer a call within 30 s:"; tail -n 5 "$WORK/peer.log"; } >"$WORK/why"
  stop_tree
  return 1
}

declare -A RATE P50 P99 CPU RSS GEN WHY
for round in $(seq 1 "$ROUNDS"); do
  for peer in actix-mcp fastmcp mcp-proxy contextforge; do
    if ! start "$peer"; then
      WHY[$peer]="$(head -n 3 "$WORK/why" | tr '\n' ' ' | cut -c1-220)"
      [ "$round" = 1 ] && echo "$peer: n/a — ${WHY[$peer]}"
      continue
    fi
    eras="2025-11-25"
    # A gateway that serves 2026-07-28 is driven statelessly too.
    "$LOAD" "$URL" 1 1 "$TOOL" 2026-07-28 2>/dev/null | grep -q " errors=0 " && eras="2025-11-25 2026-07-28"
    for era in $eras; do
      for c in $CONNS; do
        t0=$(tree_ticks "$PID")
        out="$(taskset -c 1 "$LOAD" "$URL" "$c" "$DURATION" "$TOOL" "$era" 2>/dev/null)"
        t1=$(tree_ticks "$PID")
        rss=$(tree_rss_kib "$PID")
        read -r calls errors rate client_us p50 p99 < <(awk '{for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          print v["calls"], v["errors"], v["calls/s"], v["client_cpu_us_per_call"], v["p50_us"], v["p99_us"]}' <<<"$out")
        [ "$errors" = 0 ] || { echo "$peer $era @$c: $errors of $calls calls failed" >&2; exit 1; }
        per=$(awk -v t="$((t1 - t0))" -v hz="$HZ" -v n="$calls" -v cu="$client_us" 'BEGIN {printf "%.0f", t / hz * 1e6 / n + cu}')
        gen=$(awk -v r="$rate" -v cu="$client_us" 'BEGIN {printf "%.0f", r * cu / 1e4}')
        key="$peer $era @$c"
        echo "round $round $key: calls/s=$rate p50_us=$p50 p99_us=$p99 cpu_us_per_call=$per rss_mib=$((rss / 1024)) client_cpu=${gen}%"
        RATE[$key]+="$rate "; P50[$key]+="$p50 "; P99[$key]+="$p99 "; CPU[$key]+="$per "; RSS[$key]+="$((rss / 1024)) "; GEN[$key]+="$gen "
      done
    done
    stop_tree
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : "n/a")}'; }
echo "== medians of $ROUNDS rounds ($DURATION s each): calls/s, p50/p99 µs, CPU µs per call (whole path), RSS MiB (gateway + upstream), client CPU"
for key in $(printf '%s\n' "${!RATE[@]}" | tr ' ' '_' | sort); do
  k="${key//_/ }"
  echo "$k: calls/s=$(echo "${RATE[$k]}" | median) p50=$(echo "${P50[$k]}" | median) p99=$(echo "${P99[$k]}" | median)" \
    "cpu_us_per_call=$(echo "${CPU[$k]}" | median) rss_mib=$(echo "${RSS[$k]}" | median) client_cpu=$(echo "${GEN[$k]}" | median)%"
done
last="gateway-peers:"
for peer in actix-mcp fastmcp mcp-proxy contextforge; do
  k="$peer 2025-11-25 @16"
  if [ -n "${RATE[$k]:-}" ]; then v="$(echo "${RATE[$k]}" | median) calls/s"; else v="n/a"; fi
  [ "$peer" = actix-mcp ] || v="${v% calls/s}"
  last+=" $peer $v,"
done
echo "${last%,}"
