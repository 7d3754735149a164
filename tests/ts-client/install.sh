#!/usr/bin/env bash
# Installs the TypeScript MCP client and what the tests run with it, from
# the npm registry, into ${ACTIX_MCP_TS_CLIENT_HOME:-target/ts-client}: the
# client (with its Skills extension client), the ext-apps host side
# (AppBridge), esbuild (bundles host.mjs for the browser test's page) and
# playwright-core (drives the machine's Chromium). Then bundles host.mjs
# into host.js there, beside the scripts the tests run (drive.mjs for the
# MCP Apps browser test, skills.mjs for the Skills one, gateway.mjs for the
# gateway's, legacy_flows.mjs for legacy sessions across instances). A
# second run does nothing. Needs npm. The
# test calls this itself when it has not been run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
home="${ACTIX_MCP_TS_CLIENT_HOME:-target/ts-client}"
packages=(
  "@modelcontextprotocol/client@2.4.0"
  "@modelcontextprotocol/core@2.4.0"
  "@modelcontextprotocol/ext-apps@2.0.4"
  "zod@4.6.7"
  "esbuild@0.28.2"
  "playwright-core@1.65.1"
)
stamp="$(printf '%s\n' "${packages[@]}" | cat - "$here/host.mjs" "$here/drive.mjs" "$here/skills.mjs" "$here/gateway.mjs" "$here/legacy_flows.mjs" | sha256sum | cut -c1-16)"
[ -f "$home/host.js" ] && [ "$(cat "$home/.stamp" 2>/dev/null)" = "$stamp" ] && exit 0
command -v npm >/dev/null || { echo "ts-client: npm is needed" >&2; exit 2; }
mkdir -p "$(dirname "$home")"
tmp="$(mktemp -d "$(dirname "$home")/.ts-client.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo '{"name":"actix-mcp-ts-client","version":"0.0.0","private":true,"type":"module"}' >"$tmp/package.json"
echo "ts-client: npm install ${packages[*]}" >&2
# esbuild fetches its platform binary in a post-install script.
(cd "$tmp" && npm install --no-audit --no-fund --loglevel=error "${packages[@]}" >&2)
cp "$here/host.mjs" "$here/drive.mjs" "$here/skills.mjs" "$here/gateway.mjs" "$here/legacy_flows.mjs" "$tmp/"
(cd "$tmp" && ./node_modules/.bin/esbuild host.mjs --bundle --format=esm --platform=browser --outfile=host.js --log-level=warning >&2)
echo "$stamp" >"$tmp/.stamp"
rm -rf "$home" && mv "$tmp" "$home"
trap - EXIT
