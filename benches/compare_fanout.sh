#!/usr/bin/env bash
# Fan-out over HTTP/1.1, per delivery, against its two floors on this
# machine: `mcp-load fanout` (10,000 listen streams, each on its own
# connection, every one subscribed to test://watched-resource; EVENTS
# triggers of notifications/resources/updated) against
#
#   fanout-floor  one non-blocking write of the same pre-framed bytes per
#                 socket from the triggering task, and nothing else: what
#                 loopback TCP itself costs per delivery;
#   actix-web     echo-baseline --fanout: one channel per stream feeding a bare
#                 actix-web SSE response (a wake-up and the dispatcher's
#                 write per delivery), no filter, no subscription id;
#   actix-mcp     the server (ACTIX_MCP_WORKERS=1): hub, relay, listener
#                 actors, each stream's subscription id in its frame.
#
# Every server is pinned to CPU 0, mcp-load to CPU 1; ROUNDS interleaved
# rounds. For each run it prints the server's CPU per delivery (its CPU per
# event, from /proc, divided by the streams), the client's CPU per event and
# the p99 time until every stream has the event; then medians, min–max and
# the ratio to each floor. On loopback the kernel runs the reader's receive
# path inside the sender's write, so the server's figure includes it.
#
#   bash benches/compare_fanout.sh        # ROUNDS=3 EVENTS=20 STREAMS=10000
# Bounded: ROUNDS x 3 runs, each opening STREAMS streams and sending EVENTS
# events 50 ms apart. Needs an open-files limit above STREAMS + 100 (and
# mcp-load's --sources spreads the client's ports over 127.0.0.1..4).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; EVENTS="${EVENTS:-20}"; STREAMS="${STREAMS:-10000}"
# shellcheck source=lib.sh
. benches/lib.sh
streams_fit "$STREAMS"
cargo build --release -q -p actix-mcp -p mcp-load
PORT=18194
OUT="$(mktemp)"
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true; rm -f "$OUT"' EXIT

run() { # NAME CMD...
  local name=$1; shift
  ACTIX_MCP_WORKERS=1 taskset -c 0 "$@" 2>/dev/null &
  SERVER=$!
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
  done
  local log
  log=$(taskset -c 1 target/release/mcp-load fanout --url "http://127.0.0.1:$PORT/mcp" \
    --streams "$STREAMS" --events "$EVENTS" --sources 4 --pid "$SERVER")
  kill -INT "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
  local server client p99
  server=$(sed -n 's/.*CPU per event: server \([0-9.]*\) ms.*/\1/p' <<<"$log")
  client=$(sed -n 's/.*this client \([0-9.]*\) ms.*/\1/p' <<<"$log")
  p99=$(sed -n 's/.*until every stream has it:.*p99=\([0-9.]*\)ms.*/\1/p' <<<"$log")
  [ -n "$server" ] && [ -n "$client" ] && [ -n "$p99" ] || { echo "$name: no figures in:" >&2; echo "$log" >&2; exit 1; }
  local per
  per=$(echo "scale=2; $server * 1000 / $STREAMS" | bc)
  printf '%-13s server %6.1f ms/event = %5.2f us/delivery   client %6.1f ms/event   until all p99 %6.1f ms\n' \
    "$name" "$server" "$per" "$client" "$p99"
  echo "$name $per $client $p99" >>"$OUT"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round"
  run fanout-floor target/release/fanout-floor "127.0.0.1:$PORT"
  run actix-web target/release/echo-baseline "127.0.0.1:$PORT" --fanout
  run actix-mcp target/release/actix-mcp serve --catalog everything --bind "127.0.0.1:$PORT" --log-level warning
done

python3 - "$OUT" "$STREAMS" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
names = ["fanout-floor", "actix-web", "actix-mcp"]
print(f"\nHTTP/1.1 fan-out to {sys.argv[2]} streams, medians (min-max) of {len(rows) // 3} rounds")
print("server         us/delivery            vs write floor  vs actix-web  client ms/event  until all p99 ms")
per = {n: [float(r[1]) for r in rows if r[0] == n] for n in names}
med = {n: st.median(per[n]) for n in names}
for n in names:
    client = st.median(float(r[2]) for r in rows if r[0] == n)
    p99 = st.median(float(r[3]) for r in rows if r[0] == n)
    spread = f"{med[n]:5.2f} ({min(per[n]):.2f}-{max(per[n]):.2f})"
    print(f"{n:<14} {spread:<22} {med[n] / med['fanout-floor']:5.2f}x          "
          f"{med[n] / med['actix-web']:5.2f}x       {client:8.1f}         {p99:8.1f}")
print(f"actix-mcp's own part above the bare write: {med['actix-mcp'] - med['fanout-floor']:.2f} us per delivery")
PY
