#!/usr/bin/env bash
# Fan-out of one upstream event through the gateway: STREAMS listen
# streams (HTTP/1.1) subscribed to `test://watched-resource`, and EVENTS
# times a `tools/call test_trigger_resource_update` that makes the server publish
# `notifications/resources/updated` for it, measured by `mcp-load fanout`:
#   direct   `actix-mcp serve --catalog everything`: the event is its own;
#   gateway  `actix-mcp serve` with that catalog's stdio server as its one
#            upstream (`prefix = ""`): the trigger is forwarded, the upstream
#            publishes on the one subscription the gateway holds for every
#            listener's URI, and the gateway fans it out.
# The server under test (and the gateway's stdio child) on CPU 0, mcp-load
# on CPU 1; ROUNDS interleaved rounds. Per run: server CPU per event (for
# the gateway, the gateway and its child together) and per delivery, the
# generator's CPU per event, and p99 until every stream has the event.
#
#   bash benches/gateway_fanout.sh     # ROUNDS=3 EVENTS=20 STREAMS=10000
# Bounded: ROUNDS x 2 runs of EVENTS events. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"; EVENTS="${EVENTS:-20}"; STREAMS="${STREAMS:-10000}"
# shellcheck source=lib.sh
. benches/lib.sh
streams_fit "$STREAMS"
build_release
BIN="$PWD/target/$PROFILE/actix-mcp"
PORT=18197
DIR="$(mktemp -d)"
SERVER=""
trap '[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true; rm -rf "$DIR"' EXIT
cat >"$DIR/gateway.toml" <<TOML
[[upstreams]]
name = "everything"
prefix = ""
command = "taskset"
args = ["-c", "0", "$BIN", "stdio", "--catalog", "everything", "--log-level", "error"]
TOML

# Starts the server of NAME, waits until it serves the trigger, runs
# mcp-load fanout against it, prints one line of figures.
run() {
  local name=$1
  if [ "$name" = direct ]; then
    ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$PORT" --catalog everything --log-level error 2>/dev/null &
  else
    ACTIX_MCP_WORKERS=1 taskset -c 0 "$BIN" serve --bind "127.0.0.1:$PORT" --config "$DIR/gateway.toml" --log-level error 2>/dev/null &
  fi
  SERVER=$!
  for _ in $(seq 1 100); do
    curl -s -X POST "http://127.0.0.1:$PORT/mcp" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
      -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}' \
      2>/dev/null | grep -q test_trigger_resource_update && break
    sleep 0.1
  done
  local child t0 log t1
  child="$(pgrep -P "$SERVER" | head -n 1 || true)"
  t0=$([ -n "$child" ] && ticks "$child" || echo 0)
  log=$(taskset -c 1 target/$PROFILE/mcp-load fanout --url "http://127.0.0.1:$PORT/mcp" \
    --streams "$STREAMS" --events "$EVENTS" --sources 4 --pid "$SERVER")
  t1=$([ -n "$child" ] && ticks "$child" || echo 0)
  kill -INT "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
  local server client p99 upstream per
  server=$(sed -n 's/.*CPU per event: server \([0-9.]*\) ms.*/\1/p' <<<"$log")
  client=$(sed -n 's/.*CPU per event: server.*this client \([0-9.]*\) ms.*/\1/p' <<<"$log")
  p99=$(sed -n 's/.*until every stream has it:.*p99=\([0-9.]*\)ms.*/\1/p' <<<"$log")
  [ -n "$server" ] && [ -n "$client" ] && [ -n "$p99" ] || { echo "$name: no figures in:" >&2; echo "$log" >&2; exit 1; }
  # The gateway's stdio child's CPU per event, added to the gateway's.
  upstream=$(awk -v t="$((t1 - t0))" -v hz="$HZ" -v n="$EVENTS" 'BEGIN{printf "%.2f", t/hz*1000/n}')
  server=$(awk -v a="$server" -v b="$upstream" 'BEGIN{printf "%.1f", a+b}')
  per=$(awk -v s="$server" -v n="$STREAMS" 'BEGIN{printf "%.2f", s*1000/n}')
  echo "$name: server_ms_per_event=$server us_per_delivery=$per generator_ms_per_event=$client until_all_p99_ms=$p99"
}

declare -A SRV PER GEN P99
for round in $(seq 1 "$ROUNDS"); do
  for name in direct gateway; do
    line=$(run "$name")
    echo "round $round $line"
    SRV[$name]+="$(sed -n 's/.*server_ms_per_event=\([0-9.]*\).*/\1/p' <<<"$line") "
    PER[$name]+="$(sed -n 's/.*us_per_delivery=\([0-9.]*\).*/\1/p' <<<"$line") "
    GEN[$name]+="$(sed -n 's/.*generator_ms_per_event=\([0-9.]*\).*/\1/p' <<<"$line") "
    P99[$name]+="$(sed -n 's/.*until_all_p99_ms=\([0-9.]*\).*/\1/p' <<<"$line") "
  done
done
echo "== medians of $ROUNDS rounds: one event to $STREAMS listen streams"
for name in direct gateway; do
  echo "$name: server_ms_per_event=$(echo "${SRV[$name]}" | median) us_per_delivery=$(echo "${PER[$name]}" | median)" \
    "generator_ms_per_event=$(echo "${GEN[$name]}" | median) until_all_p99_ms=$(echo "${P99[$name]}" | median)"
done
