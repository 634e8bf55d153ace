// `required: true` holds when the server's executor cannot be reached (issue 39.2): a required MCP
// server placed on an ssh executor whose port is closed fails every turn with the message a
// required server that cannot start gives (and the model is never asked); an optional one there is
// only left out with its notice. No sshd needed: nothing listens on the port.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, expectRpcError, scenario, writeFiles } from "./harness.mjs";
import { freePort } from "./sshd.mjs";

const skip = fs.existsSync("/usr/bin/ssh") ? false : "no ssh client (apt-get install openssh-client)";

async function setUp(ctx, required) {
  const closed = await freePort();
  const fake = await ctx.fakeModel([{ text: "answered without the server" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const server = path.join(REPO_ROOT, "tests/fixtures/mcp/where-server.mjs");
  writeFiles(home.configDir, {
    "executors/deadbox.yaml": `id: deadbox\ntype: ssh\nhost: 127.0.0.1\nport: ${closed}\nuser: nobody\n` +
      "ssh_options: [UserKnownHostsFile=/dev/null]\n",
    "mcp_servers/far.yaml": `id: far\ntype: stdio\ncommand: node\nargs: [${server}]\nexecutors: [deadbox]\n` +
      (required ? "required: true\n" : ""),
  });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  return { fake, h, sessionId, home };
}

scenario("a required MCP server whose executor cannot be reached fails every turn, naming the server and the executor", async (ctx) => {
  const { fake, h, sessionId, home } = await setUp(ctx, true);
  for (const turn of ["first", "second"]) {
    const e = await expectRpcError(h.prompt(sessionId, turn, { timeout: 30000 }), "session/prompt");
    assert.equal(e.code, -32603, `an internal error: ${JSON.stringify(e)}`);
    assert.ok(e.message.startsWith(`The required MCP server 'far' (${path.join(home.configDir, "mcp_servers", "far.yaml")}) could not be reached: `),
      `promise: required: true holds on an unreachable executor (${turn} turn): ${e.message}`);
    assert.match(e.message, /executor 'deadbox' \(ssh nobody@127\.0\.0\.1:\d+\): cannot connect: connection refused/);
  }
  assert.equal(fake.requests.length, 0, "the model was never called");
  assert.ok(h.noticesOf(sessionId).some((n) => /MCP server `far` could not start/.test(n)), "the user was told at the start too");
  assert.equal(h.exitInfo, null, "the agent keeps running");
  h.assertSchemaClean();
}, { timeout: 90000, skip });

scenario("an optional MCP server whose executor cannot be reached is left out and the turn runs", async (ctx) => {
  const { fake, h, sessionId } = await setUp(ctx, false);
  assert.equal((await h.prompt(sessionId, "hi", { timeout: 30000 })).stopReason, "end_turn");
  assert.equal(fake.requests.length, 1);
  assert.ok(h.noticesOf(sessionId).some((n) => /MCP server `far` could not start/.test(n)));
  h.assertSchemaClean();
}, { timeout: 60000, skip });
