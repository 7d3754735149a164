-- wrk script: `tools/call` of the `echo` tool inside a 2025-11-25 session
-- (the legacy era): no `_meta`, the session named by `Mcp-Session-Id`,
-- which the caller opened with `initialize` and passes as MCP_SESSION.
local session = os.getenv("MCP_SESSION")
if not session or session == "" then
  error("MCP_SESSION must name an open session")
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.headers["Mcp-Session-Id"] = session
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
