#!/usr/bin/env bash
# Installs the gateways benches/gateway_peers.sh compares, pinned, from
# PyPI, each in a virtual environment of its own under
# ${ACTIX_MCP_PEERS_HOME:-target/peers}: fastmcp 4.1.6 (its proxy),
# mcp-proxy 0.13.0 and ContextForge (mcp-contextforge-gateway 1.1.0, which
# needs Python 3.12 or newer: where python3 is older the reason is written
# to contextforge/.unavailable instead). A second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
home="${ACTIX_MCP_PEERS_HOME:-target/peers}"
mkdir -p "$home"
install() { # NAME PACKAGE
  local name=$1 pkg=$2
  [ "$(cat "$home/$name/.stamp" 2>/dev/null)" = "$pkg" ] && return 0
  rm -rf "$home/$name.tmp" "$home/$name/.unavailable"
  python3 -m venv "$home/$name.tmp"
  if "$home/$name.tmp/bin/python" -m pip install -q "$pkg" >"$home/$name.log" 2>&1; then
    echo "$pkg" >"$home/$name.tmp/.stamp"
    rm -rf "$home/$name" && mv "$home/$name.tmp" "$home/$name"
  else
    rm -rf "$home/$name.tmp" "$home/$name"; mkdir -p "$home/$name"
    { echo "pip install $pkg failed with $(python3 --version):"; tail -n 3 "$home/$name.log"; } >"$home/$name/.unavailable"
  fi
}
install fastmcp "fastmcp==4.1.6"
install mcp-proxy "mcp-proxy==0.13.0"
install contextforge "mcp-contextforge-gateway==1.1.0"
