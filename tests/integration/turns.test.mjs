// Text turns against both wire formats, stop reasons, model failures.
import assert from "node:assert/strict";
import { SLACK, scenario, expectRpcError, toolNames, userText } from "./harness.mjs";

for (const provider of ["openai", "anthropic"]) {
  scenario(`text turn (${provider}): streamed chunks, thoughts, end_turn, request shape`, async (ctx) => {
    const chunks = ["Hel", "lo, ", "wor", "ld!"];
    const { fake, ws, h } = await ctx.setup({
      provider,
      script: [{ reasoning: "Let me think about greetings.", chunks, usage: { input: 12, output: 4 } }],
    });
    const { sessionId } = await h.newSession(ws);
    const res = await h.prompt(sessionId, "Say hello to the world");
    assert.equal(res.stopReason, "end_turn");

    const msgChunks = h.updatesOf(sessionId, "agent_message_chunk").map((u) => u.content);
    assert.ok(msgChunks.length >= 1);
    for (const c of msgChunks) assert.equal(c.type, "text");
    assert.equal(msgChunks.map((c) => c.text).join(""), "Hello, world!");
    assert.equal(h.textOf(sessionId, "agent_thought_chunk"), "Let me think about greetings.");
    // thoughts precede the answer, as streamed
    const kinds = h.updatesOf(sessionId).map((u) => u.sessionUpdate).filter((k) => k === "agent_thought_chunk" || k === "agent_message_chunk");
    assert.ok(kinds.lastIndexOf("agent_thought_chunk") < kinds.indexOf("agent_message_chunk"), `order: ${kinds.join(",")}`);

    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0];
    assert.equal(req.provider, provider);
    assert.equal(req.path, provider === "openai" ? "/v1/chat/completions" : "/v1/messages");
    assert.equal(req.body.stream, true);
    assert.equal(req.body.model, "test-model");
    assert.match(userText(req), /Say hello to the world/);
    const names = toolNames(req);
    for (const n of ["read_file", "apply_patch", "bash"]) assert.ok(names.includes(n), `tool ${n} offered: ${names.join(", ")}`);
    if (provider === "openai") {
      assert.equal(req.headers.authorization, "Bearer sk-test");
      for (const t of req.body.tools) assert.equal(t.type, "function");
    } else {
      assert.equal(req.headers["x-api-key"], "sk-test");
      assert.ok(req.headers["anthropic-version"], "anthropic-version header");
      assert.equal(typeof req.body.max_tokens, "number");
      for (const t of req.body.tools) assert.equal(typeof t.input_schema, "object");
    }
    h.assertSchemaClean();
  });
}

scenario("stop reason: finish length -> max_tokens (openai)", async (ctx) => {
  const { ws, h } = await ctx.setup({ provider: "openai", script: [{ text: "truncated answ", finish: "length" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "long answer please")).stopReason, "max_tokens");
  assert.equal(h.textOf(sessionId), "truncated answ");
  h.assertSchemaClean();
});

scenario("stop reason: max_tokens (anthropic)", async (ctx) => {
  const { ws, h } = await ctx.setup({ provider: "anthropic", script: [{ text: "truncated", finish: "length" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "long answer please")).stopReason, "max_tokens");
  h.assertSchemaClean();
});

scenario("stop reason: content_filter -> refusal (openai)", async (ctx) => {
  const { ws, h } = await ctx.setup({ provider: "openai", script: [{ text: "I can", finish: "content_filter" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "something bad")).stopReason, "refusal");
  h.assertSchemaClean();
});

scenario("stop reason: refusal (anthropic)", async (ctx) => {
  const { ws, h } = await ctx.setup({ provider: "anthropic", script: [{ text: "No.", finish: "refusal" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "something bad")).stopReason, "refusal");
  h.assertSchemaClean();
});

scenario("stop reason: max_turn_requests after exactly 3 model requests", async (ctx) => {
  const forever = Array.from({ length: 6 }, (_, i) => ({ toolCalls: [{ id: `call_loop_${i}`, name: "read_file", arguments: { path: "hello.txt" } }] }));
  const { fake, ws, h } = await ctx.setup({ script: forever, files: { "hello.txt": "loop\n" }, extraYaml: "max_turn_requests: 3\n" });
  const { sessionId } = await h.newSession(ws);
  const res = await h.prompt(sessionId, "read forever");
  assert.equal(res.stopReason, "max_turn_requests");
  assert.equal(fake.requests.length, 3);
  h.assertSchemaClean();
});

scenario("model HTTP 500 then success: retried, end_turn, exactly 2 model requests", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ status: 500 }, { text: "recovered fine" }] });
  const { sessionId } = await h.newSession(ws);
  const res = await h.prompt(sessionId, "hello");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(h.answerOf(sessionId), "recovered fine");
  assert.match(h.noticesOf(sessionId).join("\n"), /retrying 1\/\d.*HTTP 500/, "the user is told that the request is being retried");
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(fake.requests[1].body.messages, fake.requests[0].body.messages, "the retry resends the same conversation");
  h.assertSchemaClean();
});

scenario("model HTTP 429 (retry-after: 0) then success (anthropic)", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ provider: "anthropic", script: [{ status: 429 }, { text: "after the rate limit" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn");
  assert.equal(h.answerOf(sessionId), "after the rate limit");
  assert.match(h.noticesOf(sessionId).join("\n"), /retrying 1\/\d/, "the user is told that the request is being retried");
  assert.equal(fake.requests.length, 2);
  h.assertSchemaClean();
});

scenario("model HTTP 401: JSON-RPC error naming FAKE_MODEL_KEY, not retried", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ status: 401 }] });
  const { sessionId } = await h.newSession(ws);
  const err = await expectRpcError(h.prompt(sessionId, "hello"));
  assert.match(err.message, /FAKE_MODEL_KEY/);
  assert.doesNotMatch(err.message + h.stderr, /sk-test/, "the key itself is never printed");
  assert.equal(fake.requests.length, 1);
  h.assertSchemaClean();
});

scenario("model hang: prompt fails with a timeout within 5 s, the server stays alive", async (ctx) => {
  const { ws, h } = await ctx.setup({ script: [{ hang: true }], configOpts: { maxRetries: 0, idleTimeoutSeconds: 1 } });
  const { sessionId } = await h.newSession(ws);
  const t0 = Date.now();
  const err = await expectRpcError(h.prompt(sessionId, "hello", { timeout: 8000 }));
  const elapsed = Date.now() - t0;
  assert.ok(elapsed < 5000 * SLACK, `failed after ${elapsed} ms`);
  assert.match(err.message, /time(d)?[ -]?out/i);
  const init = await h.initialize();
  assert.equal(init.protocolVersion, 1);
  assert.equal(h.exitInfo, null);
  h.assertSchemaClean();
});

scenario("model stalls mid-stream: idle timeout fails the prompt, the server stays alive", async (ctx) => {
  const { ws, h } = await ctx.setup({ script: [{ chunks: ["part one ", "part two"], stallAfterChunks: 1 }], configOpts: { maxRetries: 0, idleTimeoutSeconds: 1 } });
  const { sessionId } = await h.newSession(ws);
  const t0 = Date.now();
  const err = await expectRpcError(h.prompt(sessionId, "hello", { timeout: 8000 }));
  assert.ok(Date.now() - t0 < 5000 * SLACK);
  assert.match(err.message, /time(d)?[ -]?out|idle/i);
  assert.equal((await h.initialize()).protocolVersion, 1);
  h.assertSchemaClean();
});
