#!/usr/bin/env bash
# What governance costs per stateless `tools/call`, in instructions
# (callgrind, counted as benches/instructions.sh counts them: every thread
# but the main one, the difference between two sizes): nothing configured
# (the default), the audit log (`[audit]`, its writer thread included), a
# Cedar policy (`[policy]`), both, and a quota counted in memory; with a
# `redis-server` on PATH, also the hub on Redis without and with a quota
# counted there (the server's instructions only: Redis's are not counted).
#
#   bash benches/governance.sh      # prints one line per setup
#
# BIN is the server (default target/$PROFILE/actix-mcp); CALLS the two sizes
# ("SMALL LARGE", default "500 2500").
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh
# Without BIN, the server is built here (every feature, $PROFILE).
[ -n "${BIN:-}" ] || build_server
BIN="${BIN:-target/$PROFILE/actix-mcp}"
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
# A quota no call reaches: every call is counted and let through.
QUOTA='[[quotas]]\nname = "bench"\nlimit = 1000000000\nper_secs = 3600\n'
printf "$QUOTA" >"$WORK/quota.toml"
SETUPS="none audit policy both quota"
REDIS=""
if command -v redis-server >/dev/null; then
  RPORT=$(( 20000 + RANDOM % 20000 ))
  redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
  REDIS=$!
  trap 'kill "$SERVER" "$REDIS" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  printf '[hub]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:%s/"\n' "$RPORT" >"$WORK/redis.toml"
  { printf "$QUOTA"; cat "$WORK/redis.toml"; } >"$WORK/quota-redis.toml"
  SETUPS="$SETUPS redis quota-redis"
fi

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
printf '%-11s %14s %8s\n' setup instructions change
for setup in $SETUPS; do
  a="$(total "$setup" "$SMALL")"
  b="$(total "$setup" "$LARGE")"
  per=$(( (b - a) / (LARGE - SMALL) ))
  [ -n "$base" ] || base=$per
  # The Redis setups against the hub on Redis without quotas.
  case "$setup" in redis) rbase=$per ;; esac
  ref=$base
  case "$setup" in quota-redis) ref=$rbase ;; esac
  printf '%-11s %14d %+7d\n' "$setup" "$per" $((per - ref))
done
[ "$(wc -l <"$WORK/audit.jsonl")" -gt 0 ] || { echo "the audit log stayed empty" >&2; exit 1; }
