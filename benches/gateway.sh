#!/usr/bin/env bash
# What the gateway adds to a call: `tools/call echo` of the stdio server
# `actix-mcp stdio --catalog everything`, (A) called directly by the client
# (actors/examples/client_load.rs, which starts it as its child) and (B)
# through the gateway (the client over HTTP to `actix-mcp serve --upstream`,
# which starts the same stdio server as its child). Every reply is checked.
#
# The client is pinned to CPU 1, the gateway and the stdio servers to CPU 0;
# ROUNDS interleaved rounds of DURATION s at each concurrency of CONNS. Per
# run: calls/s, latency p50/p99 (µs), and CPU µs per call of the whole path:
# A = the client and its stdio child (getrusage of the finished client and
# its waited-for child); B = the client, plus the gateway and its stdio
# child (from /proc ticks over the run). The summary gives medians and what
# the gateway adds: latency and CPU per call, B − A.
#
#   bash benches/gateway.sh      # ROUNDS=3 DURATION=5 CONNS="1 16"
# Bounded: ROUNDS x 2 x |CONNS| x DURATION s. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-1 16}"
cargo build --release -q -p actix-mcp
cargo build --release -q -p actix-mcp --example client_load
BIN="$PWD/target/release/actix-mcp"
LOAD="$PWD/target/release/examples/client_load"
UPSTREAM="taskset -c 0 $BIN stdio --catalog everything --log-level error"
PORT=18196
URL="http://127.0.0.1:$PORT/mcp"
ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$PORT" --log-level error \
  --upstream "stdio=$UPSTREAM" 2>/dev/null &
GATEWAY_PID=$!
trap 'kill "$GATEWAY_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  "$LOAD" "$URL" 1 1 stdio__echo 2>/dev/null | grep -q " errors=0 " && break
  sleep 0.2
done
# The gateway's stdio child (its pid, for its CPU).
UPSTREAM_PID="$(pgrep -P "$GATEWAY_PID" | head -n 1)"
[ -n "$UPSTREAM_PID" ] || { echo "the gateway did not start its upstream" >&2; exit 1; }

# shellcheck source=lib.sh
. benches/lib.sh
# The client's calls, p50, p99 and the CPU seconds of it and its children.
measure() {
  run_pinned 'calls=(?P<calls>\d+) ok=\d+ errors=(?P<errors>\d+) .* p50_us=(?P<p50>\d+) p99_us=(?P<p99>\d+)' "$@"
}

declare -A CPU P50 P99 RATE
for c in $CONNS; do
  for round in $(seq 1 "$ROUNDS"); do
    for path in direct gateway; do
      if [ "$path" = direct ]; then
        read -r calls p50 p99 cpu < <(measure "$LOAD" "stdio:$UPSTREAM" "$c" "$DURATION" echo)
        extra=0
      else
        g0=$(ticks "$GATEWAY_PID"); u0=$(ticks "$UPSTREAM_PID")
        read -r calls p50 p99 cpu < <(measure "$LOAD" "$URL" "$c" "$DURATION" stdio__echo)
        g1=$(ticks "$GATEWAY_PID"); u1=$(ticks "$UPSTREAM_PID")
        extra=$(awk -v t="$((g1 - g0 + u1 - u0))" -v hz="$HZ" 'BEGIN{print t/hz}')
      fi
      per=$(awk -v a="$cpu" -v b="$extra" -v n="$calls" 'BEGIN{printf "%.1f", (a+b)*1e6/n}')
      rate=$(awk -v n="$calls" -v d="$DURATION" 'BEGIN{printf "%.0f", n/d}')
      echo "round $round $path @$c: calls/s=$rate p50_us=$p50 p99_us=$p99 cpu_us_per_call=$per"
      CPU[$path@$c]+="$per "; P50[$path@$c]+="$p50 "; P99[$path@$c]+="$p99 "; RATE[$path@$c]+="$rate "
    done
  done
done
echo "== medians of $ROUNDS rounds ($DURATION s each)"
for c in $CONNS; do
  for path in direct gateway; do
    echo "$path @$c: calls/s=$(echo "${RATE[$path@$c]}" | median) p50_us=$(echo "${P50[$path@$c]}" | median)" \
      "p99_us=$(echo "${P99[$path@$c]}" | median) cpu_us_per_call=$(echo "${CPU[$path@$c]}" | median)"
  done
  for m in P50 P99 CPU; do
    declare -n arr="$m"
    a=$(echo "${arr[direct@$c]}" | median); b=$(echo "${arr[gateway@$c]}" | median)
    echo "the gateway adds @$c: $m $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%+.1f", b-a}') µs"
  done
done
