// The official TypeScript client's Skills extension client against a
// server: lists every skill, reads and verifies every file of each (size,
// SHA-256 digest, and for a SKILL.md its frontmatter against the entry),
// gets one skill and reads a directory. Prints one JSON line:
//   node skills.mjs MCP_URL DIRECTORY_URI [VERSION]
// With VERSION (2026-07-28) the client speaks that stateless revision;
// without, it opens a legacy session with initialize.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

const [url, directory, version] = process.argv.slice(2);
const out = {};
try {
  const options = { capabilities: {} };
  if (version) options.versionNegotiation = { mode: { pin: version } };
  const client = new Client({ name: "actix-mcp-skills-check", version: "1.0.0" }, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  out.version = client.getNegotiatedProtocolVersion();
  const skills = new SkillsClient(client);
  out.supported = skills.supported;
  out.directoryRead = skills.directoryRead;
  const listing = await skills.list();
  out.skills = listing.skills.map((s) => s.uri);
  out.invalid = (listing.invalid || []).length;
  out.files = {};
  for (const skill of listing.skills) {
    for (const file of skill.resources) {
      const read = await skills.read(skill, file.uri);
      out.files[file.uri] = { verified: read.verified, frontmatter: read.frontmatter || null };
    }
  }
  const got = await skills.get(out.skills[0]);
  out.got = { uri: got.skill.uri, cached: got.ttlMs !== undefined && got.cacheScope !== undefined };
  const dir = await skills.readDirectory(directory);
  out.directory = dir.resources.map((r) => [r.uri, r.mimeType || null]);
  await client.close();
} catch (e) {
  out.error = String(e && e.stack ? e.stack : e);
}
console.log(JSON.stringify(out));
