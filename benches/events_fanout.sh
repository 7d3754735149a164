#!/usr/bin/env bash
# One occurrence to many `events/stream` streams beside one resource update
# to as many `subscriptions/listen` streams, on the same server binary:
# `mcp-load fanout --event events` (STREAMS streams of `signal.fired`, each
# on its own HTTP/1.1 connection, EVENTS `fire_event` calls) against
# `mcp-load fanout` (the listen streams' `resources/updated`). An events
# stream reads the type's history from its cursor when woken; a listen
# stream is handed its event by the hub's relay.
#
# The server is pinned to CPU 0, mcp-load to CPU 1; ROUNDS interleaved
# rounds. Each run prints the server's CPU per delivery (its CPU per event
# divided by the streams), the load generator's CPU per event (its
# headroom: it must stay under the server's) and the p99 time until every
# stream has the event; then the medians.
#
#   bash benches/events_fanout.sh        # ROUNDS=3 EVENTS=20 STREAMS=10000
# Bounded: ROUNDS x 2 runs, each opening STREAMS streams and sending EVENTS
# events 50 ms apart.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; EVENTS="${EVENTS:-20}"; STREAMS="${STREAMS:-10000}"
# shellcheck source=lib.sh
. benches/lib.sh
streams_fit "$STREAMS"
build_release
PORT=18196
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true' EXIT

run() { # KIND (listen | events)
  local event=resource
  [ "$1" = events ] && event=events
  ACTIX_MCP_WORKERS=1 taskset -c 0 "target/$PROFILE/actix-mcp" --catalog everything \
    --bind "127.0.0.1:$PORT" 2>/dev/null &
  SERVER=$!
  for _ in $(seq 1 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
  done
  local log
  log=$(taskset -c 1 "target/$PROFILE/mcp-load" fanout --url "http://127.0.0.1:$PORT/mcp" \
    --streams "$STREAMS" --events "$EVENTS" --sources 4 --pid "$SERVER" --event "$event")
  stop_process "$SERVER"; SERVER=""
  local server client p99
  server=$(sed -n 's/.*CPU per event: server \([0-9.]*\) ms.*/\1/p' <<<"$log")
  client=$(sed -n 's/.*CPU per event: server.*this client \([0-9.]*\) ms.*/\1/p' <<<"$log")
  p99=$(sed -n 's/.*until every stream has it:.*p99=\([0-9.]*\)ms.*/\1/p' <<<"$log")
  local per_delivery
  per_delivery=$(awk -v s="$server" -v n="$STREAMS" 'BEGIN{printf "%.2f", s*1000/n}')
  echo "$1 server_us_per_delivery=$per_delivery client_ms_per_event=$client p99_all_ms=$p99"
}

results=()
for round in $(seq 1 "$ROUNDS"); do
  for kind in listen events; do
    line=$(run "$kind")
    echo "round $round: $line"
    results+=("$line")
  done
done
for kind in listen events; do
  per=$(printf '%s\n' "${results[@]}" | grep "^$kind " | sed -n 's/.*server_us_per_delivery=\([0-9.]*\).*/\1/p' | median)
  client=$(printf '%s\n' "${results[@]}" | grep "^$kind " | sed -n 's/.*client_ms_per_event=\([0-9.]*\).*/\1/p' | median)
  p99=$(printf '%s\n' "${results[@]}" | grep "^$kind " | sed -n 's/.*p99_all_ms=\([0-9.]*\).*/\1/p' | median)
  echo "median $kind: server ${per} µs per delivery, load generator ${client} ms per event, p99 until all ${p99} ms"
done
