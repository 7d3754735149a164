"""An MCP server written with the Python SDK (`mcp`), for the client's
tests: a tool, a templated resource and a prompt, served over stdio
(`server.py stdio`) or Streamable HTTP (`server.py http PORT`), where one
endpoint answers both eras."""

import sys

from mcp.server import MCPServer

mcp = MCPServer("python-sdk-server")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@mcp.prompt()
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review this code:\n\n{code}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
