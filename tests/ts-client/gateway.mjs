// The official TypeScript client driving a gateway in a legacy session
// (initialize, 2025-11-25): lists, calls a tool with progress, answers an
// upstream's elicitation, reads a file through server-filesystem, gives up
// on a long call (abort: notifications/cancelled), subscribes to a
// resource and waits for its update, and calls the Python upstream. Prints
// one JSON line:
//   node gateway.mjs MCP_URL FILE_PATH
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, path] = process.argv.slice(2);
const out = {};
const text = (r) => r.content.map((c) => c.text || "").join("");
try {
  const client = new Client(
    { name: "actix-mcp-gateway-check", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    out.elicitationMessage = request.params.message;
    return { action: "accept", content: { name: "Grace", check: true } };
  });
  const updated = new Promise((resolve) =>
    client.setNotificationHandler("notifications/resources/updated", (n) => resolve(n.params.uri)),
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  out.version = client.getNegotiatedProtocolVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

  const progress = [];
  const args = { duration: 1, steps: 3 };
  await client.callTool(
    { name: "ts__trigger-long-running-operation", arguments: args },
    { onprogress: (p) => progress.push(p.progress) },
  );
  out.progress = progress;

  out.elicited = text(await client.callTool({ name: "ts__trigger-elicitation-request", arguments: {} }));
  out.file = text(await client.callTool({ name: "files__read_text_file", arguments: { path } }));

  // Given up after 1 s: the client sends notifications/cancelled.
  try {
    const long = { name: "ts__trigger-long-running-operation", arguments: { duration: 30, steps: 30 } };
    await client.callTool(long, { signal: AbortSignal.timeout(1000) });
    out.gaveUp = false;
  } catch {
    out.gaveUp = true;
  }

  // The TypeScript server sends updates of subscribed resources every 5 s
  // once asked to (the toggle may find them on already).
  const toggle = () => client.callTool({ name: "ts__toggle-subscriber-updates", arguments: {} });
  if (/Stopped/.test(text(await toggle()))) await toggle();
  await client.subscribeResource({ uri: "demo://resource/dynamic/text/1" });
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error("no update within 20 s")), 20000));
  out.updated = await Promise.race([updated, late]);

  out.added = (await client.callTool({ name: "py__add", arguments: { a: 2, b: 3 } })).structuredContent;
  await client.close();
} catch (e) {
  out.error = String(e && e.stack ? e.stack : e);
}
console.log(JSON.stringify(out));
