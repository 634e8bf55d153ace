// `_session/steering` (the extension codex-acp and claude-agent-acp ship): a message sent while a
// turn runs joins it at its next model request; with no turn running it starts one or is handed
// back (idleBehavior "promptRequired"). Hooks, cancel, bad input and session/load as for a prompt.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { scenario, expectRpcError, pgrep, sleep, toolResultText, userText, waitUntil } from "./harness.mjs";

const STEER = "_session/steering";

function steer(h, sessionId, text, extra = {}) {
  return h.request(STEER, { sessionId, prompt: [{ type: "text", text }], ...extra });
}

/** The user_message_chunk updates of a session that carry `text`. */
function userChunks(h, sessionId, text) {
  return h.updatesOf(sessionId, "user_message_chunk").filter((u) => u.content?.type === "text" && u.content.text.includes(text));
}

/** Index of the first message of an OpenAI request body matching pred (-1: none). */
function messageIndex(req, pred) {
  return (req.body?.messages ?? []).findIndex(pred);
}
const isToolResult = (id) => (m) => m.role === "tool" && m.tool_call_id === id;
const isUserSaying = (text) => (m) => m.role === "user" && JSON.stringify(m.content).includes(text);

/** A command that runs about `secs` seconds and can be found with pgrep. */
function slowCommand(secs) {
  const tag = `${secs}.${crypto.randomInt(100000, 999999)}`;
  return { command: `sleep ${tag}; echo slept`, pattern: `sleep ${tag}` };
}

/** A prompt whose turn runs a slow bash call (`call_slow`) then answers `final`; resolves once the command runs. */
async function turnInSlowTool(ctx, { secs = 2, final = "Tests updated too.", hooks, extraSteps = [] } = {}) {
  const s = slowCommand(secs);
  const script = [{ toolCalls: [{ id: "call_slow", name: "bash", arguments: { command: s.command } }] }, { text: final }, ...extraSteps];
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  if (hooks) {
    const dir = path.join(home.configDir, "hooks");
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(hooks)) {
      fs.writeFileSync(path.join(dir, name), text);
      if (text.startsWith("#!")) fs.chmodSync(path.join(dir, name), 0o755);
    }
  }
  const h = await ctx.agent({ env: home.env, cwd: ws });
  const init = await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const prompt = h.prompt(sessionId, "fix the bug");
  await h.waitUntil(() => pgrep(s.pattern).length > 0, { timeout: 10000, label: `${s.pattern} running` });
  return { fake, ws, home, h, init, sessionId, prompt, s };
}

/** Retries session/prompt while a turn the steering started still runs. */
async function promptWhenIdle(h, sessionId, text) {
  for (let i = 0; ; ++i) {
    try {
      return await h.prompt(sessionId, text);
    } catch (e) {
      if (i > 100 || !/already running/.test(e.message)) throw e;
      await sleep(50);
    }
  }
}

scenario("steering while a slow tool runs: injected, shown as the user's, sent after the tool result; the prompt ends once", async (ctx) => {
  const { fake, h, init, sessionId, prompt } = await turnInSlowTool(ctx);
  assert.equal(init._meta?.steering?.supported, true, "initialize advertises _meta.steering.supported as the peers do");
  const reply = await steer(h, sessionId, "also update the tests");
  assert.deepEqual(reply, { outcome: "injected" }, "a message steered into a running turn is injected");
  const shown = userChunks(h, sessionId, "also update the tests");
  assert.equal(shown.length, 1, "the steered message is shown once as a user message");
  assert.ok(shown[0].messageId, "the steered message's chunk carries its messageId");
  assert.equal(fake.requests.length, 1, "the model is not asked again while the tool still runs");
  const res = await prompt;
  assert.equal(res.stopReason, "end_turn", "the turn the message joined ends once, normally");
  assert.equal(fake.requests.length, 2, "one more model request: the steered message rides with the tool result");
  assert.doesNotMatch(userText(fake.requests[0]), /also update the tests/);
  const second = fake.requests[1];
  assert.match(toolResultText(second, "call_slow"), /slept/, "the tool call ran to its end (not cut by the steering)");
  const tool = messageIndex(second, isToolResult("call_slow"));
  const steered = messageIndex(second, isUserSaying("also update the tests"));
  assert.ok(tool >= 0 && steered > tool, `the steered message follows the tool result in the next request (tool ${tool}, steered ${steered})`);
  assert.equal(h.answerOf(sessionId), "Tests updated too.");
  const prompts = h.wire.transcript.filter((e) => e.dir === "->" && e.msg?.method === "session/prompt").map((e) => e.msg.id);
  const answers = h.wire.fromAgent.filter((m) => prompts.includes(m.id) && ("result" in m || "error" in m));
  assert.equal(answers.length, 1, "one session/prompt response for the turn the message joined");
  h.assertSchemaClean();
});

scenario("steering while the answer streams: the answer is not cut, the model answers the message in the same turn", async (ctx) => {
  const chunks = Array.from({ length: 8 }, (_, i) => `part${i} `);
  const { fake, ws, h } = await ctx.setup({ script: [{ chunks, chunkDelayMs: 150 }, { text: "And the tests too." }] });
  const { sessionId } = await h.newSession(ws);
  const prompt = h.prompt(sessionId, "explain the bug");
  await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk");
  assert.deepEqual(await steer(h, sessionId, "mention the tests"), { outcome: "injected" });
  assert.equal((await prompt).stopReason, "end_turn");
  assert.equal(h.answerOf(sessionId), chunks.join("") + "And the tests too.", "the streaming answer ran whole, then the answer to the steered message");
  assert.equal(fake.requests.length, 2, "the turn asked the model again for the message steered during its last answer");
  const second = fake.requests[1];
  const answer = messageIndex(second, (m) => m.role === "assistant" && JSON.stringify(m.content).includes("part7"));
  assert.ok(answer >= 0 && messageIndex(second, isUserSaying("mention the tests")) > answer, "the steered message follows the whole answer");
  h.assertSchemaClean();
});

scenario("steering while idle: promptRequired hands it back untouched; otherwise it starts a turn", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ text: "first" }, { text: "answer to the steered message" }, { text: "third" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn");
  const handedBack = await steer(h, sessionId, "only if running", { _meta: { steering: { idleBehavior: "promptRequired" } } });
  assert.deepEqual(handedBack, { outcome: "promptRequired", reason: "noRunningTurn" });
  await sleep(200);
  assert.equal(fake.requests.length, 1, "promptRequired: no model call");
  assert.equal(userChunks(h, sessionId, "only if running").length, 0, "promptRequired: the message is not shown");

  const started = await steer(h, sessionId, "start with this");
  assert.deepEqual(started, { outcome: "startedNewTurn" }, "with no turn running, a steered message starts one");
  await h.waitUntil(() => h.answerOf(sessionId).includes("answer to the steered message"), { label: "the steered turn's answer" });
  assert.equal(fake.requests.length, 2);
  assert.match(userText(fake.requests[1]), /start with this/);
  assert.equal(userChunks(h, sessionId, "start with this").length, 1, "the message that started the turn is shown as the user's");
  assert.equal((await promptWhenIdle(h, sessionId, "next")).stopReason, "end_turn", "the session goes on after the steered turn");
  assert.doesNotMatch(userText(fake.requests[2]), /only if running/, "the handed-back message never reached the history");
  h.assertSchemaClean();
});

scenario("steering then cancel: the prompt ends cancelled; the steered message stays in the conversation", async (ctx) => {
  const { fake, h, sessionId, prompt, s } = await turnInSlowTool(ctx, { secs: 30, extraSteps: [{ text: "after cancel" }] });
  assert.deepEqual(await steer(h, sessionId, "use tabs please"), { outcome: "injected" });
  await h.cancel(sessionId);
  assert.equal((await prompt).stopReason, "cancelled");
  await waitUntil(() => pgrep(s.pattern).length === 0, { timeout: 5000, label: "the slow command stopped" });
  assert.equal(fake.requests.length, 1, "no model request after the cancel");
  // The next prompt's request holds the steered message after the cancelled call, then the new prompt.
  assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn");
  const next = fake.requests.at(-1);
  const tool = messageIndex(next, isToolResult("call_slow"));
  const steered = messageIndex(next, isUserSaying("use tabs please"));
  const goOn = messageIndex(next, isUserSaying("go on"));
  assert.ok(tool >= 0 && steered > tool && goOn > steered,
    `a message steered into a cancelled turn is kept in its place (tool ${tool}, steered ${steered}, next ${goOn})`);
  h.assertSchemaClean();
});

scenario("a UserPromptSubmit hook runs for a steered message: its context joins, and it can block one", async (ctx) => {
  const { fake, h, sessionId, prompt } = await turnInSlowTool(ctx, {
    secs: 4,
    hooks: {
      "prompt.yaml": "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: prompt.sh\n",
      "prompt.sh":
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *forbidden*) echo 'no forbidden words' >&2; exit 2;; esac\n" +
        "case \"$input\" in *steered-ok*) echo 'hook-context-7f3a';; esac\n",
    },
  });
  const blocked = await steer(h, sessionId, "say something forbidden");
  assert.deepEqual(blocked, { outcome: "failed", reason: "blockedByHook" }, "a hook that blocks a steered message: failed, blockedByHook");
  assert.equal(userChunks(h, sessionId, "forbidden").length, 0, "a blocked message is not shown as the user's");
  assert.match(h.textOf(sessionId), /blocked by a hook.*no forbidden words/, "the user sees why it was blocked");
  assert.deepEqual(await steer(h, sessionId, "steered-ok: add a test"), { outcome: "injected" });
  assert.equal((await prompt).stopReason, "end_turn");
  assert.equal(fake.requests.length, 2);
  const sent = JSON.stringify(fake.requests[1].body.messages);
  assert.doesNotMatch(sent, /forbidden/, "the blocked message never reaches the model");
  assert.match(sent, /steered-ok: add a test[\s\S]*hook-context-7f3a/, "the hook's context joins the steered message");
  // With no turn running the hook runs too, before any turn starts.
  const idle = await steer(h, sessionId, "forbidden while idle");
  assert.deepEqual(idle, { outcome: "failed", reason: "blockedByHook" }, "a hook blocks a steered message that would start a turn");
  await sleep(200);
  assert.equal(fake.requests.length, 2, "a blocked message starts no model call");
  assert.equal(userChunks(h, sessionId, "forbidden").length, 0);
  h.assertSchemaClean();
});

scenario("steering with bad input (unknown or closed session, empty or bad prompt): a clear error, nothing changed", async (ctx) => {
  const { fake, h, sessionId, prompt } = await turnInSlowTool(ctx, { secs: 2 });
  const unknown = await expectRpcError(steer(h, "no-such-session", "hi"), "steering an unknown session");
  assert.equal(unknown.code, -32002, "an unknown session is resource_not_found");
  const empty = await expectRpcError(h.request(STEER, { sessionId, prompt: [] }), "steering an empty prompt");
  assert.equal(empty.code, -32602);
  const bad = await expectRpcError(h.request(STEER, { sessionId, prompt: [{ type: "video", uri: "x" }] }), "steering a bad block");
  assert.equal(bad.code, -32602);
  assert.match(bad.message, /prompt\[0\]\.type 'video' is not supported/);
  const noPrompt = await expectRpcError(h.request(STEER, { sessionId }), "steering without a prompt");
  assert.equal(noPrompt.code, -32602);
  assert.equal((await prompt).stopReason, "end_turn");
  assert.equal(fake.requests.length, 2);
  assert.deepEqual(fake.requests[1].body.messages.filter((m) => m.role === "user").length, 1, "no bad steering reached the model");
  assert.equal(h.updatesOf(sessionId, "user_message_chunk").length, 0, "nothing was shown");

  await h.request("session/close", { sessionId });
  const closed = await expectRpcError(steer(h, sessionId, "after close"), "steering a closed session");
  assert.equal(closed.code, -32002, "a closed session is resource_not_found");
  await sleep(200);
  assert.equal(fake.requests.length, 2, "steering a closed session asks the model nothing");
  h.assertSchemaClean();
});

scenario("session/load replays a steered message in its place, with its messageId", async (ctx) => {
  const { ws, home, h, sessionId, prompt } = await turnInSlowTool(ctx, { secs: 2 });
  assert.deepEqual(await steer(h, sessionId, "also update the tests", { messageId: "client-msg-7" }), { outcome: "injected" });
  const liveId = userChunks(h, sessionId, "also update the tests")[0].messageId;
  assert.equal(liveId, "client-msg-7", "a client's own messageId is the message's id");
  assert.equal((await prompt).stopReason, "end_turn");
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replay = h2.updatesOf(sessionId);
  const call = replay.findIndex((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_slow");
  const steered = replay.findIndex((u) => u.sessionUpdate === "user_message_chunk" && u.content?.text === "also update the tests");
  const answer = replay.findIndex((u) => u.sessionUpdate === "agent_message_chunk" && /Tests/.test(u.content?.text ?? ""));
  assert.ok(call >= 0 && steered > call && answer > steered,
    `the steered message is replayed between the tool call and the answer to it (call ${call}, steered ${steered}, answer ${answer})`);
  assert.equal(replay[steered].messageId, liveId, "the replayed message keeps the messageId it was shown with");
  h2.assertSchemaClean();
});
