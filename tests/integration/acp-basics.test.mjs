// initialize, configuration errors, concurrency between sessions, lifetime on stdin EOF.
import assert from "node:assert/strict";
import { SLACK, scenario, expectRpcError, withTimeout, userText } from "./harness.mjs";

scenario("initialize: protocol version 1, agent info, capabilities", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  for (const asked of [1, 2, 99]) {
    const h = await ctx.agent({ env: home.env, cwd: ws });
    const r = await h.initialize({ protocolVersion: asked });
    assert.equal(r.protocolVersion, 1, `asked for ${asked}`);
    assert.equal(r.agentInfo?.name, "openvaala");
    assert.equal(typeof r.agentInfo?.version, "string");
    assert.equal(typeof r.agentCapabilities?.loadSession, "boolean");
    assert.equal(r.agentCapabilities?.promptCapabilities?.embeddedContext, true);
    h.assertSchemaClean();
    await h.close();
  }
});

scenario("no model configured: session/new is auth_required (-32000) with a message naming OPENVAALA_MODEL, config.yaml and the auth method", async (ctx) => {
  const home = ctx.configHome({ provider: null }); // empty config dir, no OPENAI_/ANTHROPIC_/OPENVAALA_MODEL in env
  const ws = ctx.workspace({ "a.txt": "x\n" });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const err = await expectRpcError(h.newSession(ws), "session/new");
  assert.equal(err.code, -32000, "auth_required: the client offers its auth methods");
  assert.match(err.message, /OPENVAALA_MODEL/);
  assert.match(err.message, /config\.yaml/);
  assert.match(err.message, /openvaala login/);
  assert.match(err.message, /'check-provider'/, "a client without terminal auth is pointed at the method it has");
  // still alive
  const again = await h.initialize();
  assert.equal(again.protocolVersion, 1);
  assert.equal(h.exitInfo, null);
  h.assertSchemaClean();
});

scenario("two sessions in one process prompt concurrently and each gets its own updates", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      { chunks: ["alpha-1 ", "alpha-2 ", "alpha-3 ", "alpha-4"], chunkDelayMs: 60 },
      { chunks: ["beta-1 ", "beta-2 ", "beta-3 ", "beta-4"], chunkDelayMs: 60 },
    ],
  });
  const s1 = (await h.newSession(ws)).sessionId;
  const s2 = (await h.newSession(ws)).sessionId;
  assert.notEqual(s1, s2);
  const [r1, r2] = await Promise.all([h.prompt(s1, "first session prompt"), h.prompt(s2, "second session prompt")]);
  assert.equal(r1.stopReason, "end_turn");
  assert.equal(r2.stopReason, "end_turn");
  assert.equal(fake.requests.length, 2);
  // FIFO script: map each model request to its session by the prompt text it carried
  const expected = new Map();
  for (const req of fake.requests) {
    const text = (req.step.chunks ?? []).join("");
    if (userText(req).includes("first session prompt")) expected.set(s1, text);
    else if (userText(req).includes("second session prompt")) expected.set(s2, text);
  }
  assert.equal(expected.size, 2, "each model request carries exactly one session's prompt");
  assert.equal(h.textOf(s1), expected.get(s1));
  assert.equal(h.textOf(s2), expected.get(s2));
  for (const u of h.updates) assert.ok([s1, s2].includes(u.sessionId), `unexpected sessionId ${u.sessionId}`);
  h.assertSchemaClean();
});

scenario("stdin EOF: the process exits within 2 s", async (ctx) => {
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9" });  // a model nobody needs to answer
  const ws = ctx.workspace({});
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  await h.newSession(ws);
  const t0 = Date.now();
  h.child.stdin.end();
  const exit = await withTimeout(h.exited, 2000, "agent exit after stdin EOF");
  assert.ok(Date.now() - t0 < 2000 * SLACK);
  assert.equal(exit.signal, null, `exited by signal ${exit.signal}`);
  h.assertSchemaClean();
});
