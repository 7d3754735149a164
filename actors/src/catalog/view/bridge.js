// The view side of MCP Apps, for views made with View::page: the
// ui/initialize handshake with the host, tool input and results from it,
// and tools/call through it, as JSON-RPC over postMessage. It is
// window.mcpApp:
//   mcpApp.onToolInput(args => …)      the arguments of the call shown
//   mcpApp.onToolResult(result => …)   its CallToolResult
//   await mcpApp.callTool(name, args)  a call through the host (rejects on
//                                      an error or an isError result)
//   await mcpApp.connect()             the handshake; call it last
(() => {
  const pending = new Map();
  const heard = { input: [], result: [] };
  let next = 1;
  const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  window.addEventListener("message", (event) => {
    const m = event.data;
    if (event.source !== window.parent || !m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message));
      else p.resolve(m.result);
    } else if (m.method === "ui/notifications/tool-input") {
      heard.input.forEach((f) => f((m.params && m.params.arguments) || {}));
    } else if (m.method === "ui/notifications/tool-result") {
      heard.result.forEach((f) => f(m.params || {}));
    } else if (m.id !== undefined) {
      // ui/resource-teardown, ping: nothing to keep, acknowledged.
      send({ id: m.id, result: {} });
    }
  });
  const textOf = (result) => (result.content || []).map((c) => c.text || "").join("\n");
  window.mcpApp = {
    host: null,
    onToolInput(f) { heard.input.push(f); },
    onToolResult(f) { heard.result.push(f); },
    textOf,
    async callTool(name, args) {
      const result = await request("tools/call", { name, arguments: args || {} });
      if (result.isError) throw new Error(textOf(result) || `${name} failed`);
      return result;
    },
    async connect() {
      const appInfo = { name: document.title || "view", version: "1.0.0" };
      this.host = await request("ui/initialize", { appInfo, appCapabilities: {}, protocolVersion: "2026-01-26" });
      send({ method: "ui/notifications/initialized", params: {} });
      const size = () => {
        const e = document.documentElement;
        send({ method: "ui/notifications/size-changed", params: { width: e.scrollWidth, height: e.scrollHeight } });
      };
      new ResizeObserver(size).observe(document.body);
      return this.host;
    },
  };
})();
