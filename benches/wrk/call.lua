-- wrk script: `tools/call` of the `echo` tool on the 2026-07-28 wire, with
-- the headers a compliant client sends. wrk counts non-2xx replies itself
-- ("Non-2xx or 3xx responses"), which the scripts that use this fail on.
-- MCP_BEARER in the environment: sent as a bearer token.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "echo"
local bearer = os.getenv("MCP_BEARER")
if bearer and bearer ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. bearer
end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
  .. '"arguments":{"text":"hello"},"_meta":{'
  .. '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},'
  .. '"io.modelcontextprotocol/clientCapabilities":{}}}}'
