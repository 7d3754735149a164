// The official TypeScript client running full legacy-session flows
// (initialize, 2025-11-25) against one URL — a balancer in front of several
// instances, each message free to land on any of them:
//   node legacy_flows.mjs MCP_URL FLOWS CONCURRENCY
// Each flow opens a session, lists the tools, calls one with progress,
// answers an elicitation asked mid-call, subscribes to a resource and waits
// for its update on the GET stream, gives up on a long call (abort: the
// client sends notifications/cancelled), pings, and ends the session
// (DELETE). A step that fails is recorded with its error and the flow goes
// on in the same session; the last ping (tried twice) says whether the
// session survived.
// Prints one JSON line: {flows, ok, failedSteps, lostSessions, errors}.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, flowsArg, concurrencyArg] = process.argv.slice(2);
const flows = Number(flowsArg || 10);
const concurrency = Number(concurrencyArg || 4);
const watched = "test://watched-resource";
const text = (r) => r.content.map((c) => c.text || "").join("");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(cond, ms) {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(20);
  return cond();
}

async function flow(i) {
  const errors = [];
  const step = async (name, f) => {
    try {
      await f();
      return true;
    } catch (e) {
      errors.push(`${name}: ${e && e.message ? e.message : e}`);
      return false;
    }
  };
  const client = new Client({ name: `flow-${i}`, version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const user = `ts-user-${i}`;
  client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { username: user } }));
  let updates = 0;
  client.setNotificationHandler("notifications/resources/updated", (n) => {
    if (n.params.uri === watched) updates += 1;
  });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  // A session that was never opened (its initialize failed) is a failed
  // step, not a lost session.
  if (!(await step("connect", () => client.connect(transport)))) return { errors, alive: true };
  if (client.getNegotiatedProtocolVersion() !== "2025-11-25") {
    errors.push(`version: ${client.getNegotiatedProtocolVersion()}`);
  }
  await step("list", async () => {
    const { tools } = await client.listTools();
    if (!tools.some((t) => t.name === "test_elicitation")) throw new Error("test_elicitation not listed");
  });
  await step("progress", async () => {
    const seen = [];
    await client.callTool({ name: "test_tool_with_progress", arguments: {} }, { onprogress: (p) => seen.push(p.progress) });
    if (seen.length < 2) throw new Error(`progress ${JSON.stringify(seen)}`);
  });
  await step("elicitation", async () => {
    const r = await client.callTool({ name: "test_elicitation", arguments: { message: "Who are you?" } });
    if (!text(r).includes(user)) throw new Error(`answer not seen: ${text(r)}`);
  });
  await step("subscribe", async () => {
    await client.subscribeResource({ uri: watched });
    // The GET stream opens on its own after initialize: an update caused
    // before it stood is not owed, so cause one again a few times.
    for (let k = 0; k < 5 && updates === 0; k++) {
      await client.callTool({ name: "test_trigger_resource_update", arguments: { uri: watched } });
      await until(() => updates > 0, 2000);
    }
    if (updates === 0) throw new Error("no notifications/resources/updated on the GET stream");
    await client.unsubscribeResource({ uri: watched });
  });
  await step("cancel", async () => {
    let aborted = false;
    try {
      await client.callTool({ name: "sleep", arguments: { ms: 10000 } }, { signal: AbortSignal.timeout(300) });
    } catch (e) {
      aborted = /abort|timeout|cancel/i.test(String(e && e.name) + String(e && e.message));
      if (!aborted) throw e;
    }
    if (!aborted) throw new Error("the long call was not given up");
  });
  // A ping in flight on an instance that dies fails like any step; the
  // session survived if the next one, which the balancer sends elsewhere, is answered.
  const alive = (await step("ping", () => client.ping())) || (await step("ping again", () => client.ping()));
  await step("delete", () => transport.terminateSession());
  await client.close().catch(() => {});
  return { errors, alive };
}

const results = [];
let next = 0;
async function worker() {
  while (next < flows) {
    const i = next++;
    results.push(await flow(i));
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
const errors = results.flatMap((r) => r.errors);
console.log(
  JSON.stringify({
    flows: results.length,
    ok: results.filter((r) => r.errors.length === 0).length,
    failedSteps: errors.length,
    lostSessions: results.filter((r) => !r.alive).length,
    errors: errors.slice(0, 20),
  }),
);
