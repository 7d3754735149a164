#!/usr/bin/env bash
# Three instances behind nginx with no sticky state and no single point of
# failure, on one machine, as an operator sets them up: a Redis master and
# a replica, three Sentinels (config/sentinel.conf), three instances of
# config/cluster-sentinel.toml, nginx (config/nginx.conf with a third
# instance). Then it checks what the setup promises: a legacy session
# opened through the balancer is served by every instance; the master is
# killed and every instance follows the promoted replica, the session
# still served. Run from the repository root:
#
#   bash config/scale-out.sh
#
# Everything listens on loopback, writes under $WORK and is stopped at the
# end (KEEP=1 leaves it running). Each step fails loudly when what it
# checks is not so. Ports: REDIS_PORT, REPLICA_PORT, SENTINEL_PORTS,
# INSTANCE_PORTS, LB_PORT.
set -euo pipefail

BIN="${BIN:-target/release/actix-mcp}"       # cargo build --release --features full, or cargo install --features full --path actors
WORK="${WORK:-target/scale-out}"
REDIS_PORT="${REDIS_PORT:-6379}" REPLICA_PORT="${REPLICA_PORT:-6380}"
read -r -a SENTINELS <<<"${SENTINEL_PORTS:-26379 26380 26381}"
read -r -a INSTANCES <<<"${INSTANCE_PORTS:-8081 8082 8083}"
LB_PORT="${LB_PORT:-8080}"
mkdir -p "$WORK/nginx/logs"
WORK="$(cd "$WORK" && pwd)"
PIDS=()
stop() { [ -n "${KEEP:-}" ] || kill "${PIDS[@]}" 2>/dev/null || true; }
trap stop EXIT
say() { printf '\n== %s\n' "$*"; }
until_ok() { # SECONDS WHAT COMMAND…: retries COMMAND every 0.1 s
  local secs=$1 what=$2; shift 2
  for _ in $(seq 1 $((secs * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAILED: $what within $secs s" >&2; exit 1
}

say "1. A Redis master and a replica (production: on other machines, with persistence)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >"$WORK/master.log" 2>&1 &
MASTER=$!; PIDS+=($MASTER)
redis-server --port "$REPLICA_PORT" --bind 127.0.0.1 --save "" --appendonly no \
  --replicaof 127.0.0.1 "$REDIS_PORT" >"$WORK/replica.log" 2>&1 &
PIDS+=($!)
until_ok 10 "the replica in sync" sh -c "redis-cli -p $REPLICA_PORT info replication | grep -q master_link_status:up"

say "2. Three Sentinels, each from its own copy of config/sentinel.conf"
for port in "${SENTINELS[@]}"; do
  sed -e "s/^port .*/port $port/" -e "s/^sentinel monitor mymaster 127.0.0.1 [0-9]*/sentinel monitor mymaster 127.0.0.1 $REDIS_PORT/" \
    config/sentinel.conf >"$WORK/sentinel-$port.conf"
  redis-server "$WORK/sentinel-$port.conf" --sentinel >"$WORK/sentinel-$port.log" 2>&1 &
  PIDS+=($!)
done
until_ok 30 "every sentinel knowing the replica and the two others" sh -c "
  for p in ${SENTINELS[*]}; do
    redis-cli -p \$p sentinel master mymaster | grep -A1 -x num-other-sentinels | grep -qx 2 || exit 1
    redis-cli -p \$p sentinel replicas mymaster | grep -q $REPLICA_PORT || exit 1
  done"

say "3. Three instances of config/cluster-sentinel.toml, one requestState key"
export ACTIX_MCP_MRTR_KEYS; ACTIX_MCP_MRTR_KEYS="$(head -c 32 /dev/urandom | base64)"
ACTIX_MCP_REDIS_SENTINELS="$(printf '127.0.0.1:%s,' "${SENTINELS[@]}")"
export ACTIX_MCP_REDIS_SENTINELS="${ACTIX_MCP_REDIS_SENTINELS%,}"
for port in "${INSTANCES[@]}"; do
  "$BIN" serve --config config/cluster-sentinel.toml --bind "127.0.0.1:$port" 2>"$WORK/instance-$port.log" &
  PIDS+=($!)
done
for port in "${INSTANCES[@]}"; do
  until_ok 10 "instance $port ready" curl -sf "http://127.0.0.1:$port/readyz"
  curl -sf "http://127.0.0.1:$port/readyz"; echo "  <- instance on $port"
done

say "4. nginx: config/nginx.conf, round robin over the three"
servers=""
for port in "${INSTANCES[@]}"; do servers+="        server 127.0.0.1:$port max_fails=1 fail_timeout=5s;\n"; done
awk -v servers="$servers" -v lb="$LB_PORT" '
  /server 127\.0\.0\.1:808[0-9] max_fails/ { if (!done) { printf "%s", servers; done = 1 } next }
  { sub(/listen 127\.0\.0\.1:8080;/, "listen 127.0.0.1:" lb ";"); print }' config/nginx.conf >"$WORK/nginx/nginx.conf"
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e logs/error.log -g "daemon off;" &
PIDS+=($!)
until_ok 10 "nginx ready" curl -sf "http://127.0.0.1:$LB_PORT/readyz"

say "5. A legacy session opened through the balancer, served by every instance"
MCP="http://127.0.0.1:$LB_PORT/mcp"
post() { curl -sS -X POST "$MCP" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@"; }
SESSION="$(post -D - -o /dev/null -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"operator","version":"1"}}}' \
  | awk 'tolower($1) == "mcp-session-id:" {print $2}' | tr -d '\r')"
[ -n "$SESSION" ] || { echo "FAILED: initialize opened no session" >&2; exit 1; }
echo "session $SESSION"
for i in 1 2 3 4 5 6; do
  out="$(post -H "Mcp-Session-Id: $SESSION" -d "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"call $i\"}}}")"
  grep -q "\"call $i\"" <<<"$out" || { echo "FAILED: call $i in the session: $out" >&2; exit 1; }
done
served="$(awk '/POST \/mcp/ {for (i = 1; i <= NF; i++) if ($i ~ /^upstream=/) print $i}' "$WORK/nginx/logs/access.log" | sort -u | wc -l)"
echo "the session's messages were served by $served instances"
[ "$served" -eq "${#INSTANCES[@]}" ] || { echo "FAILED: not every instance served the session" >&2; exit 1; }

say "6. The master dies: every instance follows the promoted replica"
kill -9 "$MASTER"
for port in "${INSTANCES[@]}"; do
  until_ok 15 "instance $port on the promoted replica" sh -c \
    "curl -s http://127.0.0.1:$port/readyz | grep -q '\"master\":\"127.0.0.1:$REPLICA_PORT\"'"
  echo "instance $port: $(curl -s "http://127.0.0.1:$port/readyz")"
done
for i in 7 8 9; do
  out="$(post -H "Mcp-Session-Id: $SESSION" -d "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"ping\"}")"
  grep -q '"result":{}' <<<"$out" || { echo "FAILED: the session after the failover: $out" >&2; exit 1; }
done
echo "the session is served after the failover"
say "Done: three instances, no sticky sessions, Redis failed over under them."
