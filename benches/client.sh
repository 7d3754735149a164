#!/usr/bin/env bash
# What the client costs per call: `actix_mcp::client` (actors/examples/
# client_load.rs, `Client::call` of `echo`, every reply checked) beside
# mcp-load's hand-written requests (`mcp-load call`, every reply checked),
# against the same server, at 1 and 16 concurrent calls.
#
# The server is pinned to CPU 0 and each generator to CPU 1, ROUNDS
# interleaved rounds of DURATION s. For every run: calls/s, the generator's
# CPU µs per call (user + system of its whole process, from getrusage of the
# finished child) and the server's CPU µs per call (so both generators are
# seen driving the same work). The summary gives medians and the client's
# CPU per call as a ratio to mcp-load's.
#
#   bash benches/client.sh            # ROUNDS=3 DURATION=5 CONNS="1 16"
# Bounded: ROUNDS x 2 x |CONNS| x DURATION s. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; DURATION="${DURATION:-5}"; CONNS="${CONNS:-1 16}"
# shellcheck source=lib.sh
. benches/lib.sh
build_release
cargo build --profile "$PROFILE" -q -p actix-mcp --features full --example client_load
PORT=18195
URL="http://127.0.0.1:$PORT/mcp"
ACTIX_MCP_WORKERS=1 taskset -c 0 target/$PROFILE/actix-mcp serve --catalog everything \
  --bind "127.0.0.1:$PORT" --log-level warning 2>/dev/null &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done

# The generator's calls and CPU seconds (its whole process).
measure() { run_pinned '(?:requests|calls)=(?P<calls>\d+) ok=\d+ errors=(?P<errors>\d+)' "$@"; }
# Warm-up, every reply checked.
measure target/$PROFILE/mcp-load call --url "$URL" --connections 4 --duration 1 --tool echo >/dev/null
measure target/$PROFILE/examples/client_load "$URL" 4 1 >/dev/null

declare -A GEN SRV RATE
for c in $CONNS; do
  for round in $(seq 1 "$ROUNDS"); do
    for name in mcp-load client; do
      if [ "$name" = mcp-load ]; then
        cmd=(target/$PROFILE/mcp-load call --url "$URL" --connections "$c" --duration "$DURATION" --tool echo)
      else
        cmd=(target/$PROFILE/examples/client_load "$URL" "$c" "$DURATION")
      fi
      t0=$(ticks "$SERVER_PID")
      read -r calls cpu < <(measure "${cmd[@]}")
      t1=$(ticks "$SERVER_PID")
      gen=$(awk -v s="$cpu" -v n="$calls" 'BEGIN{printf "%.1f", s*1e6/n}')
      srv=$(awk -v t="$((t1 - t0))" -v hz="$HZ" -v n="$calls" 'BEGIN{printf "%.1f", t/hz*1e6/n}')
      rate=$(awk -v n="$calls" -v d="$DURATION" 'BEGIN{printf "%.0f", n/d}')
      echo "round $round $name @$c: calls/s=$rate generator_cpu_us_per_call=$gen server_cpu_us_per_call=$srv"
      GEN[$name@$c]+="$gen "; SRV[$name@$c]+="$srv "; RATE[$name@$c]+="$rate "
    done
  done
done
echo "== medians of $ROUNDS rounds ($DURATION s each)"
for c in $CONNS; do
  for name in mcp-load client; do
    echo "$name @$c: calls/s=$(echo "${RATE[$name@$c]}" | median) generator_cpu_us_per_call=$(echo "${GEN[$name@$c]}" | median) server_cpu_us_per_call=$(echo "${SRV[$name@$c]}" | median)"
  done
  a=$(echo "${GEN[client@$c]}" | median); b=$(echo "${GEN[mcp-load@$c]}" | median)
  echo "client / mcp-load CPU per call @$c: $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a/b}')x"
done
