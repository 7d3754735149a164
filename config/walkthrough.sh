#!/usr/bin/env bash
# A deployment end to end, as an operator sets it up on one machine: TLS at
# nginx, OAuth, two instances sharing Redis behind nginx, Prometheus
# scraping both; then a client's whole OAuth walk through the balancer, and
# Prometheus reading both instances. Run from the repository root:
#
#   ISSUER=https://auth.example.com CLIENT_ID=… CLIENT_SECRET=… bash config/walkthrough.sh
#
# ISSUER is your authorization server (OAuth 2.1, RFC 8414 metadata, JWT
# access tokens); CLIENT_ID and CLIENT_SECRET a client of it allowed the
# client-credentials grant with scope `mcp` (what a real MCP client gets
# with the authorization-code flow instead). Everything it starts listens
# on loopback, writes under $WORK and is stopped at the end (KEEP=1 leaves
# it running). Each step fails loudly when what it checks is not so.
set -euo pipefail

ISSUER="${ISSUER:?the authorization server's issuer URL}"
CLIENT_ID="${CLIENT_ID:?a client of the authorization server}"
CLIENT_SECRET="${CLIENT_SECRET:?that client's secret}"
TOKEN_ENDPOINT="${TOKEN_ENDPOINT:-$ISSUER/token}"   # as its metadata names it
BIN="${BIN:-target/release/actix-mcp}"       # cargo build --release --features full, or cargo install --features full --path actors
WORK="${WORK:-target/walkthrough}"
LB_PORT="${LB_PORT:-8443}" A_PORT="${A_PORT:-8081}" B_PORT="${B_PORT:-8082}"
A_METRICS="${A_METRICS:-9101}" B_METRICS="${B_METRICS:-9102}"
REDIS_PORT="${REDIS_PORT:-6379}" PROM_PORT="${PROM_PORT:-9090}"
mkdir -p "$WORK/nginx/logs" "$WORK/shared" "$WORK/prometheus"
WORK="$(cd "$WORK" && pwd)"
PIDS=()
stop() { [ -n "${KEEP:-}" ] || kill "${PIDS[@]}" 2>/dev/null || true; }
trap stop EXIT
say() { printf '\n== %s\n' "$*"; }

say "1. A TLS certificate for the balancer (production: your CA's, for your name)"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout "$WORK/tls.key" -out "$WORK/tls.pem" 2>/dev/null

say "2. Redis, which carries change notifications between the instances"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
PIDS+=($!)

say "3. Two instances of config/cluster.toml with OAuth, told the balancer's URL"
export ACTIX_MCP_MRTR_KEY; ACTIX_MCP_MRTR_KEY="$(head -c 32 /dev/urandom | base64)"  # the same for both
export ACTIX_MCP_PUBLIC_URL="https://127.0.0.1:$LB_PORT/mcp"  # what clients use, tokens name
export ACTIX_MCP_BEHIND_TLS_PROXY=true                        # nginx terminates TLS
export ACTIX_MCP_AUTH_MODE=oauth ACTIX_MCP_AUTH_ISSUERS="$ISSUER" ACTIX_MCP_AUTH_REQUIRED_SCOPES=mcp
export ACTIX_MCP_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/" ACTIX_MCP_ROOT="$WORK/shared"
ACTIX_MCP_METRICS_BIND="127.0.0.1:$A_METRICS" "$BIN" serve --config config/cluster.toml \
  --bind "127.0.0.1:$A_PORT" 2>"$WORK/a.log" &
PIDS+=($!)
ACTIX_MCP_METRICS_BIND="127.0.0.1:$B_METRICS" "$BIN" serve --config config/cluster.toml \
  --bind "127.0.0.1:$B_PORT" 2>"$WORK/b.log" &
PIDS+=($!)
for port in "$A_PORT" "$B_PORT"; do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/readyz"; echo "  <- instance on $port"
done

say "4. nginx: config/nginx.conf with its production: lines for TLS"
sed -e "s|listen 127.0.0.1:8080;.*|listen 127.0.0.1:$LB_PORT ssl;|" \
    -e "s|# production: ssl_certificate /etc/ssl/mcp.example.com.pem;|ssl_certificate $WORK/tls.pem;|" \
    -e "s|# production: ssl_certificate_key /etc/ssl/private/mcp.example.com.key;|ssl_certificate_key $WORK/tls.key;|" \
    -e "s|server 127.0.0.1:8081 |server 127.0.0.1:$A_PORT |" -e "s|server 127.0.0.1:8082 |server 127.0.0.1:$B_PORT |" \
    config/nginx.conf >"$WORK/nginx/nginx.conf"
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e logs/error.log -g "daemon off;" &
PIDS+=($!)
for _ in $(seq 1 100); do curl -skf "https://127.0.0.1:$LB_PORT/readyz" >/dev/null && break; sleep 0.1; done

say "5. Prometheus, scraping each instance's metrics listener"
cat >"$WORK/prometheus/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: actix-mcp
    static_configs: [{targets: ["127.0.0.1:$A_METRICS", "127.0.0.1:$B_METRICS"]}]
EOF
prometheus --config.file="$WORK/prometheus/prometheus.yml" --storage.tsdb.path="$WORK/prometheus/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

say "6. A client's walk: 401 with the metadata URL, the metadata, a token, the call"
MCP="https://127.0.0.1:$LB_PORT/mcp"
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"walkthrough","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
CALL='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":"."},'"$META"'}}'
mcp() { curl -sk -o "$WORK/reply" -w '%{http_code}' -D "$WORK/headers" -X POST "$MCP" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: list_dir' \
  -H 'MCP-Protocol-Version: 2026-07-28' "$@" --data "$CALL"; }
status="$(mcp)"; [ "$status" = 401 ] || { echo "want 401, got $status" >&2; exit 1; }
grep -i '^www-authenticate:' "$WORK/headers"
METADATA="https://127.0.0.1:$LB_PORT/.well-known/oauth-protected-resource/mcp"
grep -qi "resource_metadata=\"$METADATA\"" "$WORK/headers" || { echo "the challenge does not name $METADATA" >&2; exit 1; }
curl -skf "$METADATA" | tee "$WORK/metadata.json"; echo
grep -q "\"resource\":\"$ACTIX_MCP_PUBLIC_URL\"" "$WORK/metadata.json" || { echo "not the public resource" >&2; exit 1; }
TOKEN="$(curl -sf -u "$CLIENT_ID:$CLIENT_SECRET" "$TOKEN_ENDPOINT" -d grant_type=client_credentials \
  --data-urlencode "resource=$ACTIX_MCP_PUBLIC_URL" -d scope=mcp | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')"
[ -n "$TOKEN" ] || { echo "no token from $ISSUER" >&2; exit 1; }
for i in 1 2 3 4; do
  status="$(mcp -H "Authorization: Bearer $TOKEN")"
  [ "$status" = 200 ] || { echo "call $i: HTTP $status: $(cat "$WORK/reply")" >&2; exit 1; }
done
echo "4 calls through the balancer: 200"
grep -c 'upstream=127.0.0.1:' "$WORK/nginx/logs/access.log" >/dev/null
echo "instances that answered: $(grep -o 'upstream=127.0.0.1:[0-9]*' "$WORK/nginx/logs/access.log" | sort -u | tr '\n' ' ')"

say "7. Prometheus reads both instances"
query() { curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" | sed -n 's/.*"value":\[[^,]*,"\([^"]*\)".*/\1/p'; }
for _ in $(seq 1 60); do [ "$(query 'sum(up{job="actix-mcp"})')" = 2 ] && break; sleep 0.5; done
[ "$(query 'sum(up{job="actix-mcp"})')" = 2 ] || { echo "Prometheus does not see both instances up" >&2; exit 1; }
for _ in $(seq 1 60); do
  calls="$(query 'sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",error_type=""})')"
  [ "$calls" = 4 ] && break; sleep 0.5
done
[ "$calls" = 4 ] || { echo "Prometheus counts $calls calls, not 4" >&2; exit 1; }
echo "Prometheus: 2 instances up, 4 tools/call served"
say "done"
