#!/usr/bin/env bash
# Installs what the MCP Apps browser test runs, from the npm registry, into
# ${ACTIX_MCP_APPS_HOST_HOME:-target/apps-host}: the TypeScript MCP client,
# the ext-apps host side (AppBridge), esbuild (bundles host.mjs for the
# page) and playwright-core (drives the machine's Chromium). Then bundles
# host.mjs into host.js there, beside drive.mjs (which the test runs). A second run does nothing. Needs npm. The
# test calls this itself when it has not been run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
home="${ACTIX_MCP_APPS_HOST_HOME:-target/apps-host}"
packages=(
  "@modelcontextprotocol/client@2.4.0"
  "@modelcontextprotocol/core@2.4.0"
  "@modelcontextprotocol/ext-apps@2.0.4"
  "zod@4.6.7"
  "esbuild@0.28.2"
  "playwright-core@1.65.1"
)
stamp="$(printf '%s\n' "${packages[@]}" | cat - "$here/host.mjs" "$here/drive.mjs" | sha256sum | cut -c1-16)"
[ -f "$home/host.js" ] && [ "$(cat "$home/.stamp" 2>/dev/null)" = "$stamp" ] && exit 0
command -v npm >/dev/null || { echo "apps-host: npm is needed" >&2; exit 2; }
mkdir -p "$(dirname "$home")"
tmp="$(mktemp -d "$(dirname "$home")/.apps-host.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo '{"name":"actix-mcp-apps-host","version":"0.0.0","private":true,"type":"module"}' >"$tmp/package.json"
echo "apps-host: npm install ${packages[*]}" >&2
# esbuild fetches its platform binary in a post-install script.
(cd "$tmp" && npm install --no-audit --no-fund --loglevel=error "${packages[@]}" >&2)
cp "$here/host.mjs" "$here/drive.mjs" "$tmp/"
(cd "$tmp" && ./node_modules/.bin/esbuild host.mjs --bundle --format=esm --platform=browser --outfile=host.js --log-level=warning >&2)
echo "$stamp" >"$tmp/.stamp"
rm -rf "$home" && mv "$tmp" "$home"
trap - EXIT
