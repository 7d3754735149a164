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
# Then the same fan-out over HTTP/2 (16 connections carry the streams), on
# the scale server built with HTTP/2 (`examples/scale_server`: the same
# catalog and allocator as the binary): the p99 until every stream has the
# event, against its target of 30 ms, ROUNDS rounds.
#
#   bash benches/compare_fanout.sh        # ROUNDS=5 EVENTS=20 STREAMS=10000
# Bounded: ROUNDS x 3 runs, each opening STREAMS streams and sending EVENTS
# events 50 ms apart. Needs an open-files limit above STREAMS + 100 (and
# mcp-load's --sources spreads the client's ports over 127.0.0.1..4).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"; EVENTS="${EVENTS:-20}"; STREAMS="${STREAMS:-10000}"
# shellcheck source=lib.sh
. benches/lib.sh
streams_fit "$STREAMS"
build_release
cargo build --profile "$PROFILE" -q -p actix-mcp --features full --example scale_server
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
  log=$(taskset -c 1 target/$PROFILE/mcp-load fanout --url "http://127.0.0.1:$PORT/mcp" \
    --streams "$STREAMS" --events "$EVENTS" --sources 4 --pid "$SERVER" ${H2:+--http2 --h2-connections 16})
  stop_process "$SERVER"; SERVER=""
  local server client p99
  server=$(sed -n 's/.*CPU per event: server \([0-9.]*\) ms.*/\1/p' <<<"$log")
  client=$(sed -n 's/.*CPU per event: server.*this client \([0-9.]*\) ms.*/\1/p' <<<"$log")
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
  run fanout-floor target/$PROFILE/fanout-floor "127.0.0.1:$PORT"
  run actix-web target/$PROFILE/echo-baseline "127.0.0.1:$PORT" --fanout
  run actix-mcp target/$PROFILE/actix-mcp serve --catalog everything --bind "127.0.0.1:$PORT" --log-level warning
done
for round in $(seq 1 "$ROUNDS"); do
  echo "HTTP/2 round $round"
  H2=1 ACTIX_MCP_H2C=true ACTIX_MCP_LOG_LEVEL=warning run actix-mcp-h2 target/$PROFILE/examples/scale_server --http "127.0.0.1:$PORT"
done

python3 - "$OUT" "$STREAMS" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
names = ["fanout-floor", "actix-web", "actix-mcp"]
h2 = [r for r in rows if r[0] == "actix-mcp-h2"]
rows = [r for r in rows if r[0] != "actix-mcp-h2"]
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
print(f"targets: <= 1.35x the write floor ({'met' if med['actix-mcp'] <= 1.35 * med['fanout-floor'] else 'NOT met'}), "
      f"<= 1.10x bare actix-web ({'met' if med['actix-mcp'] <= 1.10 * med['actix-web'] else 'NOT met'})")
if h2:
    p99s = [float(r[3]) for r in h2]
    per = [float(r[1]) for r in h2]
    print(f"\nHTTP/2 (16 connections), {len(h2)} rounds: until every stream has it p99 median {st.median(p99s):.1f} ms "
          f"({min(p99s):.1f}-{max(p99s):.1f}), target <= 30 ms ({'met' if st.median(p99s) <= 30 else 'NOT met'}); "
          f"server {st.median(per):.2f} us per delivery, client {st.median(float(r[2]) for r in h2):.1f} ms per event")
PY
