#!/usr/bin/env bash
# Instructions the server runs per operation, counted by callgrind — a
# deterministic figure where a timing is not: a stateless `tools/call`, a
# `tools/call` in a legacy (2025-11-25) session, and one listen-stream
# delivery over HTTP/1.1. Each is the difference between two runs of the
# same scenario at two sizes, divided by the difference in operations, so
# start-up, warm-up and shutdown cancel out.
#
#   bash benches/instructions.sh            # measure, compare with the budget
#   UPDATE=1 bash benches/instructions.sh   # measure, write the budget
#
# benches/instructions.budget (or BUDGET) holds the committed figures, of
# the `release` profile's build (the one CI builds; PROFILE=dist measures the
# distribution build, whose figures are in benches/README.md); a
# measurement more than 3 % above its budget fails. BIN is the server
# (default target/$PROFILE/actix-mcp, built here as the README's `cargo
# build --release` builds it, with the default features: the budget's
# build, which CI gives as BIN), LOAD the load generator for the
# fan-out (default target/debug/mcp-load; its own speed does not count).
# CALLS and EVENTS set the two sizes ("SMALL LARGE"; default "500 2500"
# calls, "10 50" events to 1,000 streams). Identical runs agree to within
# about 0.2 %.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE="${PROFILE:-release}"
# shellcheck source=lib.sh
. benches/lib.sh
# Without BIN, the server is built here (the default features, $PROFILE).
[ -n "${BIN:-}" ] || cargo build --profile "$PROFILE" -q -p actix-mcp --bin actix-mcp
BIN="${BIN:-target/$PROFILE/actix-mcp}"
LOAD="${LOAD:-target/debug/mcp-load}"
BUDGET="${BUDGET:-benches/instructions.budget}"
TOLERANCE_PCT=3
needs valgrind curl "$BIN" "$LOAD"
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER=""

# Starts the server under callgrind on a free port; sets SERVER and URL.
start() {
  callgrind_start "$WORK/cg.$1" "$WORK/server.log" yes "$BIN" --catalog everything
}

# Stops the server; sets TOTAL to the instructions its threads ran, all
# but the main thread's (callgrind counts each thread apart: the main
# thread starts and stops the system and serves no request, and its count
# varies by millions between identical runs, where the others' agree to
# within a few thousand).
stop() {
  kill -INT "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
  local files=("$WORK/cg.$1"-*)
  [ -e "${files[0]}" ] || { echo "no callgrind output for $1" >&2; exit 1; }
  TOTAL="$(for f in "${files[@]}"; do
    case "$f" in *-01) ;; *) sed -n 's/^summary: \([0-9]*\)$/\1/p' "$f" ;; esac
  done | awk '{ t += $1 } END { print t + 0 }')"
}

# N POSTs of BODY over one keep-alive connection, every answer checked
# for HTTP 200 and `must` in its body.
posts() {
  local n=$1 body=$2 must=$3
  shift 3
  curl -s -X POST "$@" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    --data "$body" -o "$WORK/reply-#1" -w '%{http_code}\n' "$URL?n=[1-$n]" >"$WORK/codes"
  [ "$(grep -c '^200$' "$WORK/codes")" -eq "$n" ] || { echo "not every answer was 200:" >&2; sort "$WORK/codes" | uniq -c >&2; exit 1; }
  local bad
  bad="$(grep -L -- "$must" "$WORK"/reply-* | head -n 1 || true)"
  if [ -n "$bad" ]; then
    echo "an answer without $must:" >&2
    cat "$bad" >&2
    exit 1
  fi
  rm -f "$WORK"/reply-*
}

STATELESS='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"budget","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'
STATELESS_HEADERS=(-H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo')
LEGACY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'

stateless_calls() {
  start "stateless-$1"
  posts 100 "$STATELESS" '"text":"hello"' "${STATELESS_HEADERS[@]}"
  posts "$1" "$STATELESS" '"text":"hello"' "${STATELESS_HEADERS[@]}"
  stop "stateless-$1"
}

legacy_calls() {
  start "legacy-$1"
  local init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}'
  local session
  session="$(curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data "$init" "$URL" |
    tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')"
  [ -n "$session" ] || { echo "no legacy session opened" >&2; exit 1; }
  local in_session=(-H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-11-25')
  curl -s -o /dev/null -X POST "${in_session[@]}" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$URL"
  posts 100 "$LEGACY" '"text":"hello"' "${in_session[@]}"
  posts "$1" "$LEGACY" '"text":"hello"' "${in_session[@]}"
  stop "legacy-$1"
}

# 1,000 listen streams, then $1 resource updates, each delivered to all.
deliveries() {
  start "fanout-$1"
  "$LOAD" fanout --url "$URL" --streams 1000 --events "$1" --sources 1 >"$WORK/fanout.log" 2>&1 ||
    { cat "$WORK/fanout.log" >&2; exit 1; }
  stop "fanout-$1"
}

declare -A measured
# per_op KEY NAME SMALL LARGE OPS_PER_UNIT: runs NAME at both sizes; the
# instructions per operation go to measured[KEY].
per_op() {
  local key=$1 name=$2 small=$3 large=$4 unit=$5
  "$name" "$small"
  local a=$TOTAL
  "$name" "$large"
  measured[$key]=$(( (TOTAL - a) / ((large - small) * unit) ))
  echo "$key: ${measured[$key]} instructions per operation" >&2
}

# The two sizes of each scenario (CALLS, EVENTS: "SMALL LARGE").
read -r CALLS_SMALL CALLS_LARGE <<<"${CALLS:-500 2500}"
read -r EVENTS_SMALL EVENTS_LARGE <<<"${EVENTS:-10 50}"
per_op stateless_tools_call stateless_calls "$CALLS_SMALL" "$CALLS_LARGE" 1
per_op legacy_tools_call legacy_calls "$CALLS_SMALL" "$CALLS_LARGE" 1
per_op listen_delivery deliveries "$EVENTS_SMALL" "$EVENTS_LARGE" 1000

if [ "${UPDATE:-}" = 1 ]; then
  {
    echo "# Instructions per operation of the ${PROFILE} profile's build (callgrind,"
    echo "# bash benches/instructions.sh; UPDATE=1 rewrites this file). A"
    echo "# measurement above a figure by more than ${TOLERANCE_PCT} % fails CI."
    for k in stateless_tools_call legacy_tools_call listen_delivery; do echo "$k ${measured[$k]}"; done
  } >"$BUDGET"
  cat "$BUDGET"
  exit 0
fi

status=0
printf '%-22s %10s %10s %8s\n' operation measured budget change
for k in stateless_tools_call legacy_tools_call listen_delivery; do
  budget="$(awk -v k="$k" '$1 == k { print $2 }' "$BUDGET")"
  [ -n "$budget" ] || { echo "$BUDGET has no $k" >&2; exit 1; }
  m="${measured[$k]}"
  change="$(awk -v m="$m" -v b="$budget" 'BEGIN { printf "%+.1f %%", (m - b) * 100 / b }')"
  verdict=ok
  if [ $((m * 100)) -gt $((budget * (100 + TOLERANCE_PCT))) ]; then
    verdict="OVER BUDGET"
    status=1
  fi
  printf '%-22s %10d %10d %8s  %s\n' "$k" "$m" "$budget" "$change" "$verdict"
done
exit "$status"
