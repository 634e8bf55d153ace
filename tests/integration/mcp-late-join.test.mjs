// MCP servers slow to start do not hold the first answer: a turn's first model request waits at
// most `mcp_startup_wait_ms` (500 ms by default) for optional servers still starting and goes on
// without them, with a notice; one that comes up later joins the same turn at its next model
// request, with a notice. A `required: true` server is always waited for.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, scenario, toolNames, writeFiles, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

const TINY = path.join(REPO_ROOT, "tests/fixtures/mcp/tiny-server.mjs");
const WITH_NOTICES = { ...DEFAULT_CLIENT_CAPABILITIES, session: { notices: {} } };

/** A tiny-server that answers initialize after `delayMs`; it writes <stateDir>/initialized-<pid> when it does. */
function slowServer(name, stateDir, delayMs) {
  const marker = `ov-late-${name}-${process.pid}-${Date.now()}`;
  return { name, command: process.execPath, args: [TINY, marker, stateDir], env: [{ name: "TINY_INIT_DELAY_MS", value: String(delayMs) }] };
}

scenario("an optional MCP server slow to start: the first model request goes without it (notice), it joins at a later request of the same turn (notice)", async (ctx) => {
  const ws = ctx.workspace({});
  const state = fs.mkdtempSync(path.join(ws, "state-"));
  // The model's first answer runs a command that ends once the server has answered initialize
  // (and a moment more, for its tools/list): the turn's next request comes after the server is up.
  const waitForServer = `until ls ${state}/initialized-* >/dev/null 2>&1; do sleep 0.1; done; sleep 1`;
  const { fake, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_wait", name: "bash", arguments: { command: waitForServer } }] },
      { text: "Done." },
    ],
    configOpts: { mcpStartupWaitMs: null },  // the server's default wait
    agentOpts: { clientCapabilities: WITH_NOTICES },
  });
  const { sessionId } = await h.newSession(ws, { mcpServers: [slowServer("slow", state, 3000)] });
  assert.equal((await h.prompt(sessionId, "go", { timeout: 30000 })).stopReason, "end_turn");

  assert.ok(!toolNames(fake.requests[0]).some((n) => n.startsWith("mcp__slow__")),
    `promise: the first model request does not wait for an optional server still starting; offered ${toolNames(fake.requests[0])}`);
  assert.ok(toolNames(fake.requests[1]).includes("mcp__slow__pid"),
    `promise: the server that came up joins at the turn's next model request; offered ${toolNames(fake.requests[1])}`);
  const notices = h.updatesOf(sessionId, "notice");
  const without = notices.findIndex((n) => /Going on without MCP servers still starting/.test(n.title) && /slow/.test(n.description));
  const joined = notices.findIndex((n) => /MCP servers joined the turn/.test(n.title) && /slow/.test(n.description));
  assert.ok(without >= 0, `the user is told the turn went on without it; notices ${JSON.stringify(notices)}`);
  assert.ok(joined > without, `and told when it joined; notices ${JSON.stringify(notices)}`);
  assert.ok(!notices.some((n) => /Waiting for MCP servers/.test(n.title)), "nothing waited for it");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("a required MCP server slow to start is waited for: its tools are in the first model request", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "Hi." }]);
  const ws = ctx.workspace({});
  const state = fs.mkdtempSync(path.join(ws, "state-"));
  const home = ctx.configHome({ modelUrl: fake.url, mcpStartupWaitMs: null });
  const tiny = slowServer("needed", state, 1500);
  writeFiles(home.configDir, {
    "mcp_servers/needed.yaml": `id: needed\ntype: stdio\nrequired: true\ncommand: ${tiny.command}\nargs: ${JSON.stringify(tiny.args)}\n` +
      `env:\n  TINY_INIT_DELAY_MS: "1500"\n`,
  });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: WITH_NOTICES });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hi", { timeout: 30000 })).stopReason, "end_turn");
  assert.ok(toolNames(fake.requests[0]).includes("mcp__needed__pid"),
    `promise: a required server is up before the model is asked; offered ${toolNames(fake.requests[0])}`);
  assert.ok(!h.updatesOf(sessionId, "notice").some((n) => /Going on without/.test(n.title)));
  h.assertSchemaClean();
}, { timeout: 60000 });
