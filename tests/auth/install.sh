#!/usr/bin/env bash
# Installs the authorization server the tests run (oidc-provider, a real
# OpenID Connect / OAuth 2.1 server, from the npm registry) into
# ${ACTIX_MCP_AUTH_SERVER_HOME:-target/auth-server}; a second run does nothing.
# Needs npm. The tests call this themselves when it has not been run.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${ACTIX_MCP_OIDC_PROVIDER_VERSION:-9.13.3}"
home="${ACTIX_MCP_AUTH_SERVER_HOME:-target/auth-server}"
[ -f "$home/node_modules/oidc-provider/package.json" ] && exit 0
command -v npm >/dev/null || { echo "auth-server: npm is needed to install oidc-provider" >&2; exit 2; }
mkdir -p "$(dirname "$home")"
tmp="$(mktemp -d "$(dirname "$home")/.auth-server.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo '{"name":"actix-mcp-auth-server","version":"0.0.0","private":true}' >"$tmp/package.json"
echo "auth-server: npm install oidc-provider@$version" >&2
(cd "$tmp" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "oidc-provider@$version" >&2)
rm -rf "$home" && mv "$tmp" "$home"
trap - EXIT
