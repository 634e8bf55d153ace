// Bad input from a client: a clear error under the request's own id, no model call, and the
// server keeps serving.
import assert from "node:assert/strict";
import { scenario } from "./harness.mjs";

const INIT = { protocolVersion: 1, clientCapabilities: {} };

scenario("requests before initialize get a clear error and nothing runs; after initialize they are served", async (ctx) => {
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9" });  // a model nobody needs to answer
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: home.env, cwd: ws });
  const early = await r.request("session/new", { cwd: ws, mcpServers: [] }, 1);
  assert.ok(early.error, `session/new before initialize must be refused, got ${JSON.stringify(early)}`);
  assert.equal(early.error.code, -32600);
  assert.match(early.error.message, /initialize/, "the error says to initialize first");
  const list = await r.request("session/list", {}, 2);
  assert.match(list.error?.message ?? "", /initialize/);
  assert.equal((await r.request("initialize", INIT, 3)).result?.protocolVersion, 1);
  const created = await r.request("session/new", { cwd: ws, mcpServers: [] }, 4);
  assert.ok(created.result?.sessionId, JSON.stringify(created));
  await r.close();
});

scenario("an empty prompt or a text block whose text is not a string is -32602, and no model is called", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ text: "fine" }] });
  const { sessionId } = await h.newSession(ws);
  const bad = [[], [{ type: "text", text: 42 }], [{ type: "text", text: ["a"] }], [{ type: "text", text: { a: 1 } }],
               [{ type: "text", text: true }], [{ type: "text" }]];
  for (const prompt of bad) {
    let error = null;
    try {
      await h.request("session/prompt", { sessionId, prompt });
    } catch (e) {
      error = e;
    }
    assert.ok(error, `prompt ${JSON.stringify(prompt)} must be refused`);
    assert.equal(error.code, -32602, `prompt ${JSON.stringify(prompt)}: ${error.message}`);
  }
  assert.equal(fake.requests.length, 0, "no model request for an invalid prompt");
  assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn", "the session still works");
  h.assertSchemaClean();
});
