#!/usr/bin/env bash
# One tools/call hop by hop, counted rather than read: the files of this
# workspace whose code runs for each call, the calls from one of its files
# into another, and the JSON conversions (serde_json parses and
# serializations) — for a stateless tools/call over HTTP, and for one the
# gateway forwards to a stdio upstream (the gateway's process only; its
# upstream is another process). A debug build under callgrind, each
# scenario at two sizes, so that what does not grow with the calls cancels
# out (benches/walk.py). Counted as ours: functions of the workspace's two
# crates (by name), each in the file its line table gives; the tool's own
# code (the everything catalog's echo) is counted apart from the server's.
#
#   bash benches/walk.sh          # prints each path's files, calls and conversions
#
# BIN is the server (default target/debug/actix-mcp, built if missing);
# SRC the checkout it was built from (default this one); CALLS the two
# sizes ("SMALL LARGE", default "20 120"); FUNCTIONS=1 lists the functions
# that run in each file.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-target/debug/actix-mcp}"
[ -x "$BIN" ] || cargo build -q -p actix-mcp --features full
BIN="$(realpath "$BIN")"
SRC="$(realpath "${SRC:-$PWD}")"
. benches/lib.sh
needs valgrind curl python3
read -r SMALL LARGE <<<"${CALLS:-20 120}"
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER=""

# start NAME ARGS…: the server under callgrind on a free port; sets URL.
start() {
  local name=$1
  shift
  callgrind_start "$WORK/cg.$name" "$WORK/server.log" no "$BIN" "$@"
}

stop() {
  kill -INT "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
}

# calls_raw N TOOL: N stateless tools/call of TOOL over one connection, answers in $WORK/reply-*.
calls_raw() {
  local n=$1 tool=$2
  local body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"$tool"'","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"walk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'
  curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" \
    --data "$body" -o "$WORK/reply-#1" "$URL?n=[1-$n]"
}

# calls N TOOL: the same, each answer checked.
calls() {
  rm -f "$WORK"/reply-*
  calls_raw "$@"
  if grep -L '"text":"hello"' "$WORK"/reply-* | grep -q .; then
    echo "an answer without the echo:" >&2
    cat "$(grep -L '"text":"hello"' "$WORK"/reply-* | head -n 1)" >&2
    exit 1
  fi
  rm -f "$WORK"/reply-*
}

# ready TOOL: waits until TOOL answers (a gateway's upstream starts after it listens).
ready() {
  for _ in $(seq 1 300); do
    rm -f "$WORK"/reply-*
    calls_raw 1 "$1"
    grep -q '"text":"hello"' "$WORK/reply-1" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "$1 never answered" >&2
  exit 1
}

# walk LABEL TOOL ARGS…: the scenario at both sizes (after 10 warm-up calls), then the counts.
walk() {
  local label=$1 tool=$2
  shift 2
  for n in "$SMALL" "$LARGE"; do
    start "$label-$n" "$@"
    ready "$tool"
    calls 10 "$tool"
    calls "$n" "$tool"
    stop
  done
  python3 benches/walk.py "$WORK/cg.$label-$SMALL" "$WORK/cg.$label-$LARGE" "$SMALL" "$LARGE" --label "$label" --root "$SRC" ${FUNCTIONS:+--functions} ${AS_COMPILED:+--as-compiled}
}

walk direct echo --catalog everything
walk gateway stdio__echo --upstream "stdio=$BIN stdio --catalog everything --log-level error"
