// A minimal MCP Apps host for the browser test: it connects to the server
// with the TypeScript MCP client (declaring the ui extension), finds the
// view of the tool named in the page's query, reads it, renders it in a
// sandboxed iframe wired with AppBridge, calls the tool and hands the view
// its input and result. Views' tool calls go through the bridge to the
// server. The page's body gets data-state="shown" once the result is in the
// view, or data-state="failed" with the reason in #error.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";

const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";

async function main() {
  const query = new URLSearchParams(location.search);
  const endpoint = new URL(query.get("mcp"), location.href);
  const name = query.get("tool");
  const args = JSON.parse(query.get("args") || "{}");
  const client = new Client(
    { name: "actix-mcp-test-host", version: "1.0.0" },
    {
      capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } },
      // The stateless revision: capabilities travel on every request.
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  await client.connect(new StreamableHTTPClientTransport(endpoint));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in tools/list`);
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`tool ${name} links to no view`);
  const read = await client.readResource({ uri });
  const view = read.contents[0];
  if (view.mimeType !== MIME) throw new Error(`view ${uri} has MIME type ${view.mimeType}`);
  document.getElementById("tools").textContent = tools.map((t) => t.name).join(" ");

  const iframe = document.createElement("iframe");
  iframe.id = "view";
  iframe.sandbox = "allow-scripts";
  iframe.style.cssText = "width: 760px; height: 520px; border: 1px solid #aaa";
  document.body.append(iframe);
  const bridge = new AppBridge(
    client,
    { name: "actix-mcp-test-host", version: "1.0.0" },
    { serverTools: {}, serverResources: {}, logging: {} },
  );
  bridge.oninitialized = async () => {
    try {
      await bridge.sendToolInput({ arguments: args });
      const result = await client.callTool({ name, arguments: args });
      await bridge.sendToolResult(result);
      document.body.dataset.state = "shown";
    } catch (e) {
      fail(e);
    }
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = view.text;
}

function fail(e) {
  document.getElementById("error").textContent = String(e && e.stack ? e.stack : e);
  document.body.dataset.state = "failed";
}

main().catch(fail);
