#!/usr/bin/env bash
# Installs the MCP servers of other SDKs that tests/client_real_servers.rs
# runs the client against, pinned, into ${ACTIX_MCP_REAL_SERVERS_HOME:-target/real-servers}:
#   node/  @modelcontextprotocol/server-everything and server-filesystem
#          from npm (legacy-era TypeScript servers; stdio, and for the first
#          Streamable HTTP too)
#   python/ a virtual environment with the Python SDK `mcp` from PyPI, which
#          runs server.py (both eras on one endpoint), and `standardwebhooks`,
#          which verify_webhooks.py checks webhook signatures with
# `install.sh node` or `install.sh python` installs one. A second run does
# nothing. The tests call this themselves when it has not been run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
home="${ACTIX_MCP_REAL_SERVERS_HOME:-target/real-servers}"
mkdir -p "$home"
what="${1:-all}"

if [ "$what" = node ] || [ "$what" = all ]; then
  pkg="@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"
  if [ "$(cat "$home/node/.stamp" 2>/dev/null)" != "$pkg" ]; then
    command -v npm >/dev/null || { echo "real-servers: npm is needed" >&2; exit 2; }
    tmp="$(mktemp -d "$home/.node.XXXXXX")"
    echo '{"name":"actix-mcp-real-servers","version":"0.0.0","private":true}' >"$tmp/package.json"
    echo "real-servers: npm install $pkg" >&2
    (cd "$tmp" && npm install --no-audit --no-fund --loglevel=error $pkg >&2) || { rm -rf "$tmp"; exit 1; }
    echo "$pkg" >"$tmp/.stamp"
    rm -rf "$home/node" && mv "$tmp" "$home/node"
  fi
fi

if [ "$what" = python ] || [ "$what" = all ]; then
  pkg="mcp==2.3.0 standardwebhooks==1.3.0"
  if [ "$(cat "$home/python/.stamp" 2>/dev/null)" != "$pkg" ]; then
    command -v python3 >/dev/null || { echo "real-servers: python3 is needed" >&2; exit 2; }
    tmp="$(mktemp -d "$home/.python.XXXXXX")"
    echo "real-servers: pip install $pkg" >&2
    python3 -m venv "$tmp" && "$tmp/bin/python" -m pip install -q $pkg >&2 || { rm -rf "$tmp"; exit 1; }
    echo "$pkg" >"$tmp/.stamp"
    # Moved, the environment's bin/python still finds its packages (the
    # tests run nothing else from it).
    rm -rf "$home/python" && mv "$tmp" "$home/python"
  fi
fi
