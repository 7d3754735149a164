#!/usr/bin/env bash
# What governance costs per stateless `tools/call`, in instructions
# (callgrind, counted as benches/instructions.sh counts them: every thread
# but the main one, the difference between two sizes): nothing configured
# (the default), the audit log (`[audit]`, its writer thread included), a
# Cedar policy (`[policy]`), and both.
#
#   bash benches/governance.sh      # prints one line per setup
#
# BIN is the server (default target/release/actix-mcp); CALLS the two sizes
# ("SMALL LARGE", default "500 2500").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-target/release/actix-mcp}"
. benches/lib.sh
needs valgrind curl "$BIN"
read -r SMALL LARGE <<<"${CALLS:-500 2500}"
WORK="$(mktemp -d)"
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER=""

cat >"$WORK/policy.cedar" <<'CEDAR'
permit(principal, action == Action::"tools/call", resource) when { resource == Tool::"echo" || resource.read_only };
forbid(principal, action, resource) when { principal.scopes.contains("blocked") };
CEDAR
printf '' >"$WORK/none.toml"
printf '[audit]\nfile = "%s/audit.jsonl"\n' "$WORK" >"$WORK/audit.toml"
printf '[policy]\nfile = "%s/policy.cedar"\n' "$WORK" >"$WORK/policy.toml"
cat "$WORK/audit.toml" "$WORK/policy.toml" >"$WORK/both.toml"

BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"governance","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'

# total SETUP N: the instructions of N calls (after 100 of warm-up) with SETUP's configuration.
total() {
  local setup=$1 n=$2 out="$WORK/cg.$1-$2"
  callgrind_start "$out" "$WORK/server.log" yes "$BIN" --catalog everything --config "$WORK/$setup.toml"
  for count in 100 "$n"; do
    curl -s -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' \
      --data "$BODY" -o "$WORK/reply-#1" "$URL?n=[1-$count]"
    if grep -L '"text":"hello"' "$WORK"/reply-* | grep -q .; then
      echo "$setup: an answer without the echo" >&2
      exit 1
    fi
    rm -f "$WORK"/reply-*
  done
  kill -INT "$SERVER"
  wait "$SERVER" 2>/dev/null || true
  SERVER=""
  for f in "$out"-*; do
    case "$f" in *-01) ;; *) sed -n 's/^summary: \([0-9]*\)$/\1/p' "$f" ;; esac
  done | awk '{ t += $1 } END { print t + 0 }'
}

base=""
printf '%-8s %14s %8s\n' setup instructions change
for setup in none audit policy both; do
  a="$(total "$setup" "$SMALL")"
  b="$(total "$setup" "$LARGE")"
  per=$(( (b - a) / (LARGE - SMALL) ))
  [ -n "$base" ] || base=$per
  printf '%-8s %14d %+7d\n' "$setup" "$per" $((per - base))
done
[ "$(wc -l <"$WORK/audit.jsonl")" -gt 0 ] || { echo "the audit log stayed empty" >&2; exit 1; }
