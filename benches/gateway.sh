#!/usr/bin/env bash
# What the gateway adds to a call: `tools/call echo` of the catalog
# `everything`, (A) from the stdio server `actix-mcp stdio --catalog
# everything` called directly by the client (actors/examples/client_load.rs,
# which starts it as its child), (L) from `actix-mcp serve --catalog
# everything` over HTTP (the call served where it arrives), and (B) through
# the gateway (the client over HTTP to `actix-mcp serve --upstream`, which
# starts the same stdio server as its child). Every reply is checked.
#
# The client is pinned to CPU 1, the servers, the gateway and the stdio
# servers to CPU 0 (one worker each); ROUNDS interleaved rounds of DURATION
# s at each concurrency of CONNS. Per run: calls/s, latency p50/p99 (µs),
# and CPU µs per call of the whole path: A = the client and its stdio child
# (getrusage of the finished client and its waited-for child); L = the
# client and the server; B = the client, plus the gateway and its stdio
# child (the servers' from /proc ticks over the run); and for L and B the
# server's process alone (B's without its stdio child). The summary gives
# medians and what the gateway adds: over A, latency and CPU of the whole
# path (B − A); over L, the hop itself — the gateway process's CPU per call
# beyond what serving the call where it arrives costs, and latency (B − L).
# At one call in flight, the hop's floor too: hop-floor (benches/load), a
# raw actix-web handler in front of the same stdio server that passes each
# body down as a line and answers with the line back (F), beside the same
# process answering the call itself (FL); F − FL is what any proxy pays to
# forward a call (a sleep and wake-up more, a pipe write and read).
#
#   bash benches/gateway.sh      # ROUNDS=3 DURATION=5 CONNS="1 16"
# Bounded: ROUNDS x (3 x |CONNS| + 2) x DURATION s. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
. benches/lib.sh
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-1 16}"
cargo build --profile "$PROFILE" -q -p actix-mcp --features full
cargo build --profile "$PROFILE" -q -p actix-mcp --features full --example client_load
cargo build --profile "$PROFILE" -q -p mcp-load --bin hop-floor
BIN="$PWD/target/$PROFILE/actix-mcp"
LOAD="$PWD/target/$PROFILE/examples/client_load"
UPSTREAM="taskset -c 0 $BIN stdio --catalog everything --log-level error"
PORT=18196
URL="http://127.0.0.1:$PORT/mcp"
ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$PORT" --log-level error \
  --upstream "stdio=$UPSTREAM" 2>/dev/null &
GATEWAY_PID=$!
LOCAL_PORT=18197
LOCAL_URL="http://127.0.0.1:$LOCAL_PORT/mcp"
ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$LOCAL_PORT" --log-level error \
  --catalog everything 2>/dev/null &
LOCAL_PID=$!
FLOOR_PORT=18198
taskset -c 0 "$PWD/target/$PROFILE/hop-floor" "127.0.0.1:$FLOOR_PORT" "$UPSTREAM" 2>/dev/null &
FLOOR_PID=$!
# Killed and waited for: a run right after this one finds the ports free.
trap 'kill "$GATEWAY_PID" "$LOCAL_PID" "$FLOOR_PID" 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  "$LOAD" "$URL" 1 1 stdio__echo 2>/dev/null | grep -q " errors=0 " && break
  sleep 0.2
done
for _ in $(seq 1 100); do
  "$LOAD" "$LOCAL_URL" 1 1 echo 2>/dev/null | grep -q " errors=0 " && break
  sleep 0.2
done
for _ in $(seq 1 100); do
  "$LOAD" "http://127.0.0.1:$FLOOR_PORT/mcp" 1 1 echo 2>/dev/null | grep -q " errors=0 " && break
  sleep 0.2
done
# The gateway's stdio child (its pid, for its CPU).
UPSTREAM_PID="$(pgrep -P "$GATEWAY_PID" | head -n 1 || true)"
[ -n "$UPSTREAM_PID" ] || { echo "the gateway did not start its upstream" >&2; exit 1; }

# The client's calls, p50, p99 and the CPU seconds of it and its children.
measure() {
  run_pinned 'calls=(?P<calls>\d+) ok=\d+ errors=(?P<errors>\d+) .* p50_us=(?P<p50>\d+) p99_us=(?P<p99>\d+)' "$@"
}

# per SECONDS CALLS: µs per call.
per() { awk -v t="$1" -v n="$2" 'BEGIN{printf "%.1f", t*1e6/n}'; }
# secs T0 T1: the seconds between two tick counts.
secs() { awk -v t="$(($2 - $1))" -v hz="$HZ" 'BEGIN{print t/hz}'; }

declare -A CPU SRV P50 P99 RATE
for c in $CONNS; do
  for round in $(seq 1 "$ROUNDS"); do
    for path in direct local gateway floor_local floor; do
      server=0; extra=0
      # The floor is one call at a time.
      case $path in floor*) [ "$c" = 1 ] || continue ;; esac
      case $path in
        direct) read -r calls p50 p99 cpu < <(measure "$LOAD" "stdio:$UPSTREAM" "$c" "$DURATION" echo) ;;
        local)
          l0=$(ticks "$LOCAL_PID")
          read -r calls p50 p99 cpu < <(measure "$LOAD" "$LOCAL_URL" "$c" "$DURATION" echo)
          server=$(secs "$l0" "$(ticks "$LOCAL_PID")") ;;
        gateway)
          g0=$(ticks "$GATEWAY_PID"); u0=$(ticks "$UPSTREAM_PID")
          read -r calls p50 p99 cpu < <(measure "$LOAD" "$URL" "$c" "$DURATION" stdio__echo)
          g1=$(ticks "$GATEWAY_PID"); u1=$(ticks "$UPSTREAM_PID")
          server=$(secs "$g0" "$g1"); extra=$(secs "$u0" "$u1") ;;
        floor_local | floor)
          route=mcp; [ "$path" = floor ] || route=local
          f0=$(ticks "$FLOOR_PID")
          read -r calls p50 p99 cpu < <(measure "$LOAD" "http://127.0.0.1:$FLOOR_PORT/$route" "$c" "$DURATION" echo)
          server=$(secs "$f0" "$(ticks "$FLOOR_PID")") ;;
      esac
      whole=$(per "$(awk -v a="$cpu" -v b="$server" -v c="$extra" 'BEGIN{print a+b+c}')" "$calls")
      own=$(per "$server" "$calls")
      rate=$(awk -v n="$calls" -v d="$DURATION" 'BEGIN{printf "%.0f", n/d}')
      echo "round $round $path @$c: calls/s=$rate p50_us=$p50 p99_us=$p99 cpu_us_per_call=$whole server_cpu_us_per_call=$own"
      CPU[$path@$c]+="$whole "; SRV[$path@$c]+="$own "; P50[$path@$c]+="$p50 "; P99[$path@$c]+="$p99 "
      RATE[$path@$c]+="$rate "
    done
  done
done
# adds LABEL ARRAY FROM TO: the difference of two paths' medians.
adds() {
  declare -n arr="$2"
  local a b
  a=$(echo "${arr[$3]}" | median); b=$(echo "${arr[$4]}" | median)
  echo -n " $1 $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%+.1f", b-a}') µs"
}
echo "== medians of $ROUNDS rounds ($DURATION s each)"
for c in $CONNS; do
  for path in direct local gateway floor_local floor; do
    [ -n "${RATE[$path@$c]:-}" ] || continue
    echo "$path @$c: calls/s=$(echo "${RATE[$path@$c]}" | median) p50_us=$(echo "${P50[$path@$c]}" | median)" \
      "p99_us=$(echo "${P99[$path@$c]}" | median) cpu_us_per_call=$(echo "${CPU[$path@$c]}" | median)" \
      "server_cpu_us_per_call=$(echo "${SRV[$path@$c]}" | median)"
  done
  echo "the gateway adds @$c over the stdio server called directly:$(adds p50 P50 "direct@$c" "gateway@$c")$(
    adds p99 P99 "direct@$c" "gateway@$c")$(adds cpu CPU "direct@$c" "gateway@$c")"
  echo "the hop @$c (gateway over serving the call where it arrives):$(adds p50 P50 "local@$c" "gateway@$c")$(
    adds p99 P99 "local@$c" "gateway@$c")$(adds "gateway cpu" SRV "local@$c" "gateway@$c")"
  [ -n "${RATE[floor@$c]:-}" ] || continue
  echo "the hop's floor @$c (a raw proxy over the same process answering):$(adds p50 P50 "floor_local@$c" "floor@$c")$(
    adds p99 P99 "floor_local@$c" "floor@$c")$(adds "proxy cpu" SRV "floor_local@$c" "floor@$c")"
done
