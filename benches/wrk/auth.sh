#!/usr/bin/env bash
# The cost of authorization: the release binary with auth off (A) and with
# `auth.mode = "oauth"` (B), `tools/call` of `echo` with a valid JWT from a
# real authorization server (oidc-provider, as in tests/auth.rs), measured
# with benches/wrk/ab.sh (server on CPU 0, wrk on CPU 1, rounds interleaved).
#
#   bash benches/wrk/auth.sh   (ROUNDS=5 DURATION=5 CONNS=16)
# Needs wrk, node and npm. Loopback only; every run is bounded by DURATION.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib.sh
. benches/lib.sh
export ROUNDS="${ROUNDS:-5}" DURATION="${DURATION:-5}" CONNS="${CONNS:-16}"
cargo build --profile "$PROFILE" -q -p actix-mcp --features full
bash tests/auth/install.sh
home="${ACTIX_MCP_AUTH_SERVER_HOME:-target/auth-server}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
log="$(mktemp)"
node tests/auth/server.mjs "$port" "$home" >"$log" 2>&1 &
issuer_pid=$!
trap 'kill $issuer_pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 200); do grep -q '^ready ' "$log" && break; sleep 0.05; done
grep -q '^ready ' "$log" || { cat "$log" >&2; exit 1; }
issuer="http://127.0.0.1:$port"
resource="http://mcp.test/mcp"
MCP_BEARER=$(curl -s -u alice:alice-secret -d "grant_type=client_credentials&resource=$resource&scope=mcp" \
  "$issuer/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
export MCP_BEARER
export A_ENV=""
export B_ENV="ACTIX_MCP_AUTH_MODE=oauth ACTIX_MCP_AUTH_ISSUERS=$issuer ACTIX_MCP_AUTH_RESOURCE=$resource ACTIX_MCP_AUTH_REQUIRED_SCOPES=mcp"
echo "A: auth off; B: auth.mode = oauth, issuer $issuer, a valid JWT on every request"
bash benches/wrk/ab.sh target/$PROFILE/actix-mcp target/$PROFILE/actix-mcp
