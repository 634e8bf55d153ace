// What an MCP server may put before the model (issue 40 item 4 and its nit): a huge tool result
// reaches the model cut at max_mcp_output_bytes (saying so), the journal keeps it once, /compact
// works past results too big for the context, and a server's tool list is capped per server.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { scenario, toolNames, toolResultText, writeFiles, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

const TINY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp/tiny-server.mjs");
const WITH_NOTICES = { ...DEFAULT_CLIENT_CAPABILITIES, session: { notices: {} } };
const serverYaml = (id, env = "") =>
  `id: ${id}\ntype: stdio\ncommand: ${process.execPath}\nargs: ["${TINY}", "ov-mcp-limits-${process.pid}"]\n${env}`;
const callBig = (id, bytes) => ({ toolCalls: [{ id, name: "mcp__fk__big", arguments: { bytes } }] });
const bodySize = (req) => Buffer.byteLength(JSON.stringify(req.body));
const count = (text, needle) => text.split(needle).length - 1;

async function start(ctx, { script, extraYaml = "", serverEnv = "", clientCapabilities = DEFAULT_CLIENT_CAPABILITIES }) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, extraYaml });
  writeFiles(home.configDir, { "mcp_servers/fk.yaml": serverYaml("fk", serverEnv) });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  return { fake, ws, home, h, sessionId };
}

scenario("a 3 MB MCP result reaches the model cut at max_mcp_output_bytes and the journal keeps it once", async (ctx) => {
  const bytes = 3_000_000;
  const { fake, home, h, sessionId } = await start(ctx, {
    script: [callBig("call_big", bytes), { text: "Got a big one." }, { text: "Next turn." }],
  });
  assert.equal((await h.prompt(sessionId, "call big")).stopReason, "end_turn");
  assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn");

  const promise = "one large MCP result must not make every later request too large for the model";
  const text = toolResultText(fake.requests[1], "call_big");
  assert.match(text, /^BIG-HEAD x/, `${promise}: the model gets the start of the result`);
  assert.ok(!text.includes("BIG-TAIL"), `${promise}: not the whole result`);
  assert.match(text, /cut: it is 3000018 bytes/, `${promise}: the model is told it was cut and how much there was`);
  for (const i of [1, 2]) {
    assert.ok(bodySize(fake.requests[i]) < 150_000,
      `${promise}: model request ${i} is ${bodySize(fake.requests[i])} bytes (the default limit is 100000)`);
  }
  const update = h.updatesOf(sessionId).find((u) => u.toolCallId === "call_big" && u.status === "completed");
  assert.ok(JSON.stringify(update.rawOutput).includes("BIG-TAIL"), "the editor's rawOutput is the result as the server sent it");

  const journal = fs.readFileSync(path.join(home.dataDir, "sessions", `${sessionId}.jsonl`), "utf8");
  assert.equal(count(journal, "BIG-TAIL"), 1, "the journal holds the whole result once (it held it 3 times)");
  assert.ok(journal.length < bytes * 1.2, `the journal is ${journal.length} bytes for a ${bytes}-byte result`);
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("/compact works after a tool result too large for the context: the summary request leaves most of it out", async (ctx) => {
  // A limit raised past what the model can take: the history now holds 1.5 MB in one result.
  const { fake, h, sessionId } = await start(ctx, {
    extraYaml: "max_mcp_output_bytes: 2000000\n",
    script: [callBig("call_big", 1_500_000), { text: "Got it." }, { text: "SUMMARY: a big result came back." }],
  });
  assert.equal((await h.prompt(sessionId, "call big")).stopReason, "end_turn");
  assert.ok(bodySize(fake.requests[1]) > 1_500_000, "set-up: with the raised limit the model got the result whole");
  assert.equal((await h.prompt(sessionId, "/compact")).stopReason, "end_turn");
  const summaryRequest = fake.requests[2];
  assert.match(JSON.stringify(summaryRequest.body), /Summarise this conversation/);
  assert.ok(bodySize(summaryRequest) < 100_000,
    `an oversized tool result must not make /compact fail like every other turn: the summary request is ${bodySize(summaryRequest)} bytes`);
  assert.match(toolResultText(summaryRequest, "call_big"), /left out of the summary request/, "the model is told what was left out");
  assert.match(h.textOf(sessionId), /Compacted/, "the compaction completed");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("a server offering 600 tools has 500 offered and the user is told, naming the server and how many were left out", async (ctx) => {
  const { fake, h, sessionId } = await start(ctx, {
    serverEnv: "env: {TINY_TOOL_COUNT: \"600\"}\n",
    script: [{ text: "one" }, { text: "two" }],
    clientCapabilities: WITH_NOTICES,
  });
  assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.equal((await h.prompt(sessionId, "again")).stopReason, "end_turn");
  const offered = toolNames(fake.requests[0]).filter((n) => n.startsWith("mcp__fk__"));
  assert.equal(offered.length, 500, "at most max_mcp_tools_per_server (500) tools of one server reach the model");
  const warnings = h.updatesOf(sessionId, "notice").filter((n) => /left out/.test(`${n.title} ${n.description ?? ""}`));
  assert.equal(warnings.length, 1, `one warning per session, not one per turn: ${JSON.stringify(warnings)}`);
  const said = `${warnings[0].title} ${warnings[0].description ?? ""}`;
  assert.match(said, /'fk'/, "the warning names the server");
  assert.match(said, /604 tools/, "how many it offers");
  assert.match(said, /104 are left out/, "and how many were left out");
  h.assertSchemaClean();
}, { timeout: 60000 });
