#!/usr/bin/env bash
# Side-by-side `tools/call` of `echo` on this machine: the raw actix-web echo
# handler (the ceiling), the official Rust SDK (rmcp 3.11, stateless, JSON
# replies; built from benches/rmcp-echo, outside the workspace) and actix-mcp
# (metrics on, authorization off: the defaults).
#
# One generator for all three, and one that is not the bottleneck: wrk (one
# thread, Debian's package) pinned to CPU 1 with benches/wrk/call.lua, the
# servers pinned to CPU 0. Each server first gets a short warm-up with
# `mcp-load call`, which verifies every reply (it must report no error);
# then ROUNDS interleaved rounds per concurrency. For every run it prints
# req/s, p50/p99, the server's CPU µs per call and wrk's own CPU use. The
# summary gives medians and min–max, ratios to the ceiling and to rmcp, and
# the generator's headroom: its CPU during the ceiling's runs, and its
# maximum on this machine — wrk against nginx returning a fixed reply on the
# same core — of which the ceiling's rate must be well short (or wrk's CPU
# well under its core) for the ceiling to be the server's and not wrk's.
#
# Two more rows for actix-mcp: `legacy`, the same call inside a 2025-11-25
# session (benches/wrk/legacy_call.lua, the session opened and checked with
# curl first), and at the end `mixed` (discover, lists, call, read, prompts
# and a three-round multi round-trip call), which needs mcp-load to follow
# each flow: its line, the server's CPU per request and mcp-load's own CPU.
#
#   bash benches/compare.sh            # ROUNDS=5 DURATION=5 CONNS="16 256"
#   PGO=1 bash benches/compare.sh      # the three servers' profile-guided builds
#                                      # (benches/pgo.sh; PGO_BUILT=1 reuses target/pgo)
# Bounded: ROUNDS x 4 runs x |CONNS| x DURATION s, plus DURATION s of mixed,
# |CONNS| x DURATION s of the generator's maximum (wrk against nginx, when
# installed) and a few seconds of warm-up. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-16 256}"
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
# shellcheck source=lib.sh
. benches/lib.sh
build_release
cargo build --release -q --manifest-path benches/rmcp-echo/Cargo.toml
BASE_BIN=target/$PROFILE/echo-baseline MCP_BIN=target/$PROFILE/actix-mcp RMCP_BIN=benches/rmcp-echo/target/release/rmcp-echo
if [ "${PGO:-0}" = 1 ]; then
  [ "${PGO_BUILT:-0}" = 1 ] || bash benches/pgo.sh
  BASE_BIN=target/pgo/echo-baseline MCP_BIN=target/pgo/actix-mcp RMCP_BIN=target/pgo/rmcp-echo
  echo "profile-guided builds (benches/pgo.sh): $BASE_BIN $MCP_BIN $RMCP_BIN"
fi
OUT="$(mktemp -d)"
BASE_PORT=18190 MCP_PORT=18191 RMCP_PORT=18192
taskset -c 0 "$BASE_BIN" "127.0.0.1:$BASE_PORT" 2>/dev/null &
BASE_PID=$!
ACTIX_MCP_WORKERS=1 taskset -c 0 "$MCP_BIN" serve --catalog everything \
  --bind "127.0.0.1:$MCP_PORT" --log-level warning 2>/dev/null &
MCP_PID=$!
taskset -c 0 "$RMCP_BIN" "127.0.0.1:$RMCP_PORT" 2>/dev/null &
RMCP_PID=$!
# The generator's own maximum here: wrk against nginx answering every POST
# with a fixed reply of the ceiling's size, on the same core (when nginx is
# installed). A ceiling well below it is the handler's, not wrk's.
GEN_PORT=18193 GEN_PID=""
if command -v nginx >/dev/null; then
  mkdir -p "$OUT/nginx/logs"
  cat >"$OUT/nginx/nginx.conf" <<CONF
worker_processes 1;
error_log $OUT/nginx/logs/error.log;
pid $OUT/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $OUT/nginx/body; proxy_temp_path $OUT/nginx/proxy;
  fastcgi_temp_path $OUT/nginx/fastcgi; uwsgi_temp_path $OUT/nginx/uwsgi; scgi_temp_path $OUT/nginx/scgi;
  server {
    listen 127.0.0.1:$GEN_PORT;
    keepalive_requests 100000000;
    location /mcp {
      default_type application/json;
      return 200 '{"id":1,"jsonrpc":"2.0","result":{"content":[{"text":"hello","type":"text"}],"resultType":"complete"}}';
    }
  }
}
CONF
  taskset -c 0 nginx -p "$OUT/nginx" -c "$OUT/nginx/nginx.conf" -g 'daemon off;' 2>/dev/null &
  GEN_PID=$!
fi
trap 'kill $BASE_PID $MCP_PID $RMCP_PID $GEN_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
sleep 1
# shellcheck source=wrk/run.sh
. benches/wrk/run.sh
port_of() { case "$1" in baseline) echo $BASE_PORT ;; rmcp) echo $RMCP_PORT ;; *) echo $MCP_PORT ;; esac; }
pid_of() { case "$1" in baseline) echo $BASE_PID ;; rmcp) echo $RMCP_PID ;; *) echo $MCP_PID ;; esac; }
script_of() { case "$1" in legacy) echo benches/wrk/legacy_call.lua ;; *) echo benches/wrk/call.lua ;; esac; }
SERVERS="baseline rmcp actix-mcp legacy"

# Verified warm-up: every reply of every server checked by mcp-load.
for name in baseline rmcp actix-mcp; do
  line=$(taskset -c 1 target/$PROFILE/mcp-load call --url "http://127.0.0.1:$(port_of $name)/mcp" \
    --connections 4 --duration 1 | head -n 1)
  grep -q ' errors=0 ' <<<"$line" || { echo "warm-up of $name failed: $line" >&2; exit 1; }
  echo "warm-up $name (every reply verified): $line"
done

# A 2025-11-25 session on actix-mcp for the legacy runs, checked with one call.
MCP_URL="http://127.0.0.1:$MCP_PORT/mcp"
open_legacy_session "$MCP_URL" "$OUT"
echo "legacy session $MCP_SESSION (tools/call checked)"

if [ -n "$GEN_PID" ]; then
  worker=$(pgrep -P "$GEN_PID" | head -n 1)
  for c in $CONNS; do
    read -r rps _ _ _ gen < <(wrk_measure "$worker" "http://127.0.0.1:$GEN_PORT/mcp" "$c" "$DURATION" benches/wrk/call.lua) || exit 1
    echo "generator maximum @$c (wrk against nginx's fixed reply): req/s=$rps wrk_cpu=${gen}%"
    echo "$c $rps $gen" >>"$OUT/generator.txt"
  done
fi

for round in $(seq 1 "$ROUNDS"); do
  for c in $CONNS; do
    for name in $SERVERS; do
      url="http://127.0.0.1:$(port_of $name)/mcp"
      read -r rps p50 p99 us gen < <(wrk_measure "$(pid_of $name)" "$url" "$c" "$DURATION" "$(script_of $name)") || exit 1
      echo "round $round  $name @$c: req/s=$rps p50=$p50 p99=$p99 server_cpu_us_per_call=$us wrk_cpu=${gen}%"
      echo "$c $name $rps $p50 $p99 $us $gen $round" >>"$OUT/all.txt"
    done
  done
done

# mixed (discover, lists, call, read, prompts, a three-round MRTR call) needs
# a client that follows each flow: mcp-load, verifying every reply. Its own
# CPU is printed: it, not the server, may be the limit here.
t0=$(wrk_cpu_ticks "$MCP_PID")
(taskset -c 1 target/$PROFILE/mcp-load mixed --url "$MCP_URL" --connections 16 --duration "$DURATION" \
  | head -n 1 >"$OUT/mixed.txt"; times >"$OUT/mixed-times.txt")
t1=$(wrk_cpu_ticks "$MCP_PID")
MIXED=$(cat "$OUT/mixed.txt")
grep -q ' errors=0 ' <<<"$MIXED" || { echo "mixed failed: $MIXED" >&2; exit 1; }
n=$(sed -n 's/^requests=\([0-9]*\) .*/\1/p' <<<"$MIXED")
MIXED_CPU=$(awk -v t0="$t0" -v t1="$t1" -v n="$n" -v k="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", (t1-t0)/k*1e6/n}')
MIXED_GEN=$(awk -v d="$DURATION" 'NR==2 {split($1,u,"m"); split($2,s,"m"); sub("s","",u[2]); sub("s","",s[2]);
  printf "%.0f", (u[1]*60+u[2]+s[1]*60+s[2])/d*100}' "$OUT/mixed-times.txt")

python3 - "$OUT/all.txt" "$OUT/generator.txt" <<'PY'
import os, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
generator = {}
if os.path.exists(sys.argv[2]):
    generator = {c: (float(r), float(g)) for c, r, g in (l.split() for l in open(sys.argv[2]))}
def ms(v):
    for unit, f in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if v.endswith(unit):
            return float(v[: -len(unit)]) * f
    return float(v)
print("\nserver     conns  req/s median (min-max)    vs ceiling  vs rmcp  p50 ms  p99 ms  CPU us/call  wrk CPU")
for c in sorted({r[0] for r in rows}, key=int):
    med = {}
    for name in ("baseline", "rmcp", "actix-mcp", "legacy"):
        sel = [r for r in rows if r[0] == c and r[1] == name]
        rps = [float(r[2]) for r in sel]
        med[name] = (st.median(rps), min(rps), max(rps), st.median([ms(r[3]) for r in sel]),
                     st.median([ms(r[4]) for r in sel]), st.median([float(r[5]) for r in sel]),
                     st.median([float(r[6]) for r in sel]))
    for name, (m, lo, hi, p50, p99, us, gen) in med.items():
        print(f"{name:<10} {c:>5}  {m:>8.0f} ({lo:.0f}-{hi:.0f})  {m/med['baseline'][0]:>9.2f}x {m/med['rmcp'][0]:>7.2f}x"
              f"  {p50:>6.2f}  {p99:>6.2f}  {us:>11.1f}  {gen:>6.0f}%")
    print(f"{'':<10} {c:>5}  p99 of actix-mcp / p99 of the ceiling: {med['actix-mcp'][4] / med['baseline'][4]:.2f}")
    gen = med["baseline"][6]
    line = f"{'':<10} {c:>5}  generator headroom: wrk used {gen:.0f}% of its core during the ceiling's runs"
    fits = gen < 90
    if c in generator:
        top, top_gen = generator[c]
        share = med["baseline"][0] / top
        fits = fits or share <= 0.9
        line += f"; its maximum here is {top:.0f} req/s (at {top_gen:.0f}% of its core), the ceiling {share:.0%} of that"
    print(line + f" ({'headroom' if fits else 'NO HEADROOM: the ceiling is the generator'})")
PY
echo
echo "mixed (mcp-load, 16 connections, ${DURATION} s, every reply verified): $MIXED"
echo "mixed: server CPU ${MIXED_CPU} us per request; mcp-load used ${MIXED_GEN}% of its core"
