"""FastMCP's proxy (`fastmcp` 4.1.6 from PyPI) in front of one stdio MCP
server, as its documentation recommends (`create_proxy` over an MCPConfig
naming the command; the backend pinned to the legacy era it speaks, as
`create_proxy`'s `mode` says to do for a one-era backend), served over
Streamable HTTP:
    python fastmcp_proxy.py PORT COMMAND [ARG…]"""

import sys

from fastmcp.server import create_proxy

port, command, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
proxy = create_proxy({"mcpServers": {"up": {"command": command, "args": args}}}, mode="legacy", name="fastmcp-proxy")
proxy.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="error")
