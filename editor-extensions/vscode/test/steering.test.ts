// A message sent while a turn runs is steered into it (`_session/steering`) when the agent
// advertises steering, shown marked; otherwise it is queued as before. The chat against a
// hand-made connection, then the connection against the REAL build/openvaala and the fake model.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { ChatSession } from "../src/vscode/chatSession.js";
import { AgentConnection, type ClientHost } from "../src/core/acpClient.js";
import { initialChatState, reduce } from "../src/core/chatState.js";
import { FakeHost } from "./fakeAgent.js";
import { agentBinary, binaryMissing, startFakeModel, makeConfigHome, makeWorkspace, agentEnv, waitUntil } from "./util.js";

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((a) => (resolve = a));
  return { promise, resolve };
}
const users = (c: ChatSession) =>
  c.state.items.filter((i) => i.kind === "user").map((i) => i as { text: string; steered?: boolean; messageId?: string });
const tick = () => new Promise((r) => setImmediate(r));

/** A chat whose first turn runs until `endTurn()`; the agent advertises steering unless told not to. */
async function chatInTurn(steering = true) {
  const host = new FakeHost();
  const conn = host.fake;
  conn.supportsSteering = steering;
  const turn = deferred<acp.PromptResponse>();
  conn.answers.prompt = () => turn.promise;
  const chat = new ChatSession(host);
  const first = chat.send("fix the bug");
  await waitUntil(() => chat.state.busy, 2000, "the first turn");
  return { host, conn, chat, first, endTurn: () => turn.resolve({ stopReason: "end_turn" }) };
}

beforeEach(() => __test.reset());

test("steering agent: a message sent during a turn is steered in, shown marked, its echo not shown twice", async () => {
  const { conn, chat, first, endTurn } = await chatInTurn();
  await chat.send("also update the tests");
  assert.deepEqual(conn.of("steer"), [["s1", [{ type: "text", text: "also update the tests" }]]], "sent with _session/steering, not queued");
  assert.deepEqual(chat.queue.list, [], "nothing waits in the queue");
  assert.deepEqual(users(chat).map((u) => [u.text, !!u.steered]), [["fix the bug", false], ["also update the tests", true]],
    "shown at once as the user's, marked as steered");
  chat.onUpdate({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "also update the tests" }, messageId: "m-1" });
  chat.onUpdate({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "On it." }, messageId: "a-1" });
  assert.equal(users(chat).length, 2, "the agent's echo of the steered message is not shown a second time");
  assert.equal(users(chat)[1]!.messageId, "m-1", "the steered message takes the id the agent gave it");
  endTurn();
  await first;
  assert.equal(conn.of("prompt").length, 1, "one prompt: the steered message rode in its turn");
});

test("agent without steering: a message sent during a turn is queued as before", async () => {
  const { conn, chat, first, endTurn } = await chatInTurn(false);
  await chat.send("later");
  assert.deepEqual(conn.of("steer"), [], "never steered into an agent that did not advertise it");
  assert.deepEqual(chat.queue.list.map((q) => q.text), ["later"]);
  endTurn();
  await first;
});

test("the turn ended before the message arrived (promptRequired): it is sent as a prompt, shown once", async () => {
  const { conn, chat, first, endTurn } = await chatInTurn();
  conn.answers.steer = async () => {
    endTurn();
    await first;
    return { outcome: "promptRequired", reason: "noRunningTurn" };
  };
  conn.answers.prompt = async () => ({ stopReason: "end_turn" });
  await chat.send("too late");
  await waitUntil(() => conn.of("prompt").length === 2 && !chat.state.busy, 2000, "sent as a prompt");
  assert.deepEqual(conn.of("prompt")[1], ["s1", "too late"]);
  assert.deepEqual(users(chat).map((u) => [u.text, !!u.steered]), [["fix the bug", false], ["too late", false]],
    "shown once, as an ordinary message");
});

test("the agent refused the steered message (failed): it leaves the chat, nothing else is sent", async () => {
  const { conn, chat, first, endTurn } = await chatInTurn();
  conn.answers.steer = async () => ({ outcome: "failed", reason: "blockedByHook" });
  await chat.send("forbidden");
  assert.deepEqual(users(chat).map((u) => u.text), ["fix the bug"], "a refused message is taken out of the chat");
  assert.deepEqual(chat.queue.list, [], "and not queued behind the user's back");
  endTurn();
  await first;
  await tick();
  assert.equal(conn.of("prompt").length, 1);
});

test("steering fails (an error): the message waits in the queue and the chat says so", async () => {
  const { conn, chat, first, endTurn } = await chatInTurn();
  conn.answers.steer = async () => {
    throw new Error("Method not found");
  };
  await chat.send("keep me");
  assert.deepEqual(chat.queue.list.map((q) => q.text), ["keep me"], "nothing typed is lost");
  assert.ok(chat.state.items.some((i) => i.kind === "notice" && /could not join the turn/.test((i as { text: string }).text)));
  assert.equal(users(chat).some((u) => u.steered), false, "the steered mark is gone");
  endTurn();
  await first;
});

test("replay: a user message chunk with no steered message waiting is shown as usual", () => {
  let s = initialChatState();
  s = reduce(s, { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "replayed" }, messageId: "m-9" } });
  assert.deepEqual(s.items.filter((i) => i.kind === "user").map((i) => (i as { text: string }).text), ["replayed"]);
});

test("real server: it advertises steering, and a message steered during a streaming answer is answered in the same turn",
  { skip: binaryMissing() },
  async () => {
    const chunks = Array.from({ length: 8 }, (_, i) => `part${i} `);
    const fake = await startFakeModel([{ chunks, chunkDelayMs: 150 }, { text: "About the tests." }]);
    const home = await makeConfigHome(fake.url);
    const ws = await makeWorkspace({});
    let state = initialChatState();
    const host: ClientHost = {
      onSessionUpdate: (n) => {
        state = reduce(state, { type: "update", update: n.update });
      },
      requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
      readTextFile: async (p) => ({ content: fs.readFileSync(p.path, "utf8") }),
      writeTextFile: async () => ({}),
      onStderr: () => {},
    };
    const conn = await AgentConnection.start({ command: agentBinary(), cwd: ws, env: await agentEnv(home.env), host });
    try {
      await conn.initialize();
      assert.equal(conn.supportsSteering, true, "OpenVaala advertises _meta.steering.supported");
      const { sessionId } = await conn.newSession(ws);
      const turn = conn.prompt(sessionId, "explain");
      await waitUntil(() => state.items.some((i) => i.kind === "agent"), 5000, "the answer streaming");
      assert.deepEqual(await conn.steer(sessionId, [{ type: "text", text: "and the tests" }]), { outcome: "injected" });
      assert.equal((await turn).stopReason, "end_turn");
      assert.equal(fake.requests.length, 2, "the turn asked the model again for the steered message");
      assert.match(JSON.stringify(fake.requests[1]!.body.messages), /part7[\s\S]*and the tests/, "after the whole answer");
    } finally {
      await conn.stop();
      await fake.close();
    }
  });
