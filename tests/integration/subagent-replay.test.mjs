// A sub-agent shown inside its parent's session (an editor without the sub-agent capability sees
// its answers and tool calls as the session's own) is replayed by session/load as it was shown
// live: the same tool calls in their final state, the same answers with the same message ids;
// and it never becomes part of the parent model's conversation.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

/** What the editor was shown of a session: each answer (messageId -> text) and each tool call merged into its last state. */
function shown(h, sessionId) {
  const answers = {};
  const calls = {};
  for (const u of h.updatesOf(sessionId)) {
    if (u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "agent_thought_chunk") {
      const key = `${u.sessionUpdate}:${u.messageId}`;
      answers[key] = (answers[key] ?? "") + (u.content?.text ?? "");
    } else if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
      const { sessionUpdate, ...fields } = u;
      calls[u.toolCallId] = { ...(calls[u.toolCallId] ?? {}), ...fields };
    }
  }
  return { answers, calls };
}

scenario("a sub-agent shown inside its session (no sub-agent capability) is replayed by session/load as it was shown live", async (ctx) => {
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_sub", name: "spawn_agent", arguments: { prompt: "Check notes.txt" } }] },
    { text: "Reading the notes first.", toolCalls: [{ id: "call_sub_read", name: "read_file", arguments: { path: "notes.txt" } }] },
    { text: "Report: notes.txt says hello." },
    { text: "The reviewer found the notes fine." },
    { text: "Second turn." },
  ]);
  const ws = ctx.workspace({ "notes.txt": "hello\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: DEFAULT_CLIENT_CAPABILITIES, unstableSdk: true });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "get the notes reviewed")).stopReason, "end_turn");
  const live = shown(h, sessionId);
  assert.ok(live.calls.call_sub_read, "set-up: the sub-agent's tool call was shown live in the session");
  assert.match(Object.values(live.answers).join("|"), /Report: notes\.txt says hello\./, "set-up: and its answer");
  assert.deepEqual(h.updatesOf(null, "subagent_update"), [], "set-up: no sub-agent sessions for this editor");
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: DEFAULT_CLIENT_CAPABILITIES, unstableSdk: true });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replayed = shown(h2, sessionId);
  assert.deepEqual(replayed.calls.call_sub_read, live.calls.call_sub_read,
    "promise: the sub-agent's tool call is replayed as it was shown live");
  assert.deepEqual(replayed.answers, live.answers, "promise: every answer, the sub-agent's too, is replayed with its text and message id");
  assert.deepEqual(Object.keys(replayed.calls).sort(), Object.keys(live.calls).sort());
  // Order as live: the spawn_agent call, then what the sub-agent showed, then the parent's answer.
  const order = h2.updatesOf(sessionId).map((u) => u.toolCallId ?? u.content?.text).filter(Boolean);
  const at = (x) => order.findIndex((o) => o === x || (typeof o === "string" && o.includes(x)));
  assert.ok(at("call_sub") < at("Reading the notes first.") && at("Reading the notes first.") < at("call_sub_read") &&
    at("call_sub_read") < at("Report: notes.txt") && at("Report: notes.txt") < at("The reviewer found"),
    `replayed in the order shown: ${JSON.stringify(order)}`);
  h2.assertSchemaClean();

  // The sub-agent's answers stay out of the parent model's conversation after the load.
  assert.equal((await h2.prompt(sessionId, "and now?")).stopReason, "end_turn");
  const sent = JSON.stringify(fake.requests.at(-1).body.messages);
  assert.doesNotMatch(sent, /Reading the notes first\./, "the parent model never saw the sub-agent's own words");
  assert.match(sent, /Report: notes\.txt says hello\./, "only its report, as spawn_agent's result");
  const log = fs.readFileSync(path.join(home.dataDir, "sessions", `${sessionId}.jsonl`), "utf8");
  assert.match(log, /"type":"subagent_message"/);
});
