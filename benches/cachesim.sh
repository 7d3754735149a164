#!/usr/bin/env bash
# Where a `tools/call` goes beyond its instructions: callgrind's cache
# simulation (its I1, D1 and last-level caches) of the raw actix-web
# handler (echo-baseline) and of actix-mcp, for the same stateless call of
# `echo` over one keep-alive connection. Per call (the difference between
# two sizes, so that start-up cancels out; every thread but the main one):
# instructions, instruction-cache misses (I1), data reads and writes and
# their D1 misses, last-level misses.
#
#   bash benches/cachesim.sh      # CALLS="500 2500"
#
# A simulation of one call at a time, not the machine's caches under load:
# it shows which server's code and data are the larger footprint.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh
build_release
needs valgrind curl
read -r SMALL LARGE <<<"${CALLS:-500 2500}"
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER=""
BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"cachesim","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'
EVENTS="Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"  # callgrind's order with --cache-sim=yes

# run NAME CALLS: the server NAME under callgrind, CALLS calls after 100;
# prints the event totals of its threads but the main one.
run() {
  local name=$1 n=$2 port out="$WORK/cg.$1.$2"
  port=$(( 20000 + RANDOM % 20000 ))
  local cg=(valgrind --tool=callgrind --cache-sim=yes --separate-threads=yes --callgrind-out-file="$out")
  case "$name" in
    baseline) "${cg[@]}" target/$PROFILE/echo-baseline "127.0.0.1:$port" 2>"$WORK/log" & ;;
    actix-mcp) ACTIX_MCP_WORKERS=1 ACTIX_MCP_LOG_LEVEL=warning "${cg[@]}" target/$PROFILE/actix-mcp serve \
      --catalog everything --bind "127.0.0.1:$port" 2>"$WORK/log" & ;;
  esac
  SERVER=$!
  for _ in $(seq 1 600); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  for count in 100 "$n"; do
    curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' --data "$BODY" \
      -o "$WORK/reply-#1" -w '%{http_code}\n' "http://127.0.0.1:$port/mcp?n=[1-$count]" >"$WORK/codes"
    [ "$(grep -c '^200$' "$WORK/codes")" -eq "$count" ] || { echo "$name: not every answer was 200" >&2; exit 1; }
    grep -q '"text":"hello"' "$WORK/reply-1" || { echo "$name: a wrong answer" >&2; cat "$WORK/reply-1" >&2; exit 1; }
    rm -f "$WORK"/reply-*
  done
  kill -INT "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
  for f in "$out"-*; do
    case "$f" in *-01) ;; *) sed -n 's/^summary: //p' "$f" ;; esac
  done | awk '{for (i = 1; i <= NF; i++) t[i] += $i} END {for (i = 1; i <= 9; i++) printf "%d ", t[i]; print ""}'
}

printf '%-10s' server; for e in $EVENTS; do printf ' %9s' "$e"; done; echo "   (per call)"
for name in baseline actix-mcp; do
  read -r -a a < <(run "$name" "$SMALL")
  read -r -a b < <(run "$name" "$LARGE")
  printf '%-10s' "$name"
  for i in 0 1 2 3 4 5 6 7 8; do printf ' %9d' $(( (b[i] - a[i]) / (LARGE - SMALL) )); done
  echo
done
