// Sessions that survive: persistence, session/load replay after kill -9, list, resume, close,
// delete, titles, usage, and context compaction.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, waitUntil, systemPrompt, toolResultText, toolResults } from "./harness.mjs";

const PATCH = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-draft\n+final\n*** End Patch";

scenario("kill -9 mid-turn, restart: session/load replays everything up to the last finished step and continues", async (ctx) => {
  const fake = await ctx.fakeModel([
    { text: "Reading notes.", toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "notes.txt" } }] },
    { text: "Patching.", toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
    { text: "Done with the notes.", usage: { input: 120, output: 30 } },
    // second turn: the model stalls mid-stream, then the agent is killed
    { chunks: ["Partial ", "answer ", "that ", "never ", "ends"], stallAfterChunks: 2 },
    // after the restart
    { text: "Back again." },
  ]);
  const ws = ctx.workspace({ "notes.txt": "draft\n" });
  const home = ctx.configHome({ modelUrl: fake.url, idleTimeoutSeconds: 30 });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "Finalise notes.txt please")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(path.join(ws, "notes.txt"), "utf8"), "final\n");
  await waitUntil(() => h.updatesOf(sessionId, "session_info_update").length > 0, { label: "session_info_update title" });
  assert.equal(h.updatesOf(sessionId, "session_info_update")[0].title, "Finalise notes.txt please");
  assert.ok(h.updatesOf(sessionId, "usage_update").some((u) => u.used === 150), "usage_update from the provider's counts");

  const second = h.prompt(sessionId, "And now summarise them").catch(() => null);
  await waitUntil(() => h.textOf(sessionId).includes("Partial answer"), { label: "second turn streaming" });
  process.kill(h.pid, "SIGKILL");
  await h.exited;
  await second;

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  const init = await h2.initialize();
  assert.equal(init.agentCapabilities.loadSession, true);
  const loadReply = await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loadReply.modes.currentModeId, "full_auto", "the mode survives");
  const replay = h2.updatesOf(sessionId);
  const kinds = replay.map((u) => u.sessionUpdate);
  assert.ok(kinds.includes("user_message_chunk"));
  const userText = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text).join("|");
  assert.match(userText, /Finalise notes\.txt please/);
  assert.match(userText, /And now summarise them/, "the interrupted turn's prompt is not lost");
  const agentText = h2.textOf(sessionId);
  assert.match(agentText, /Reading notes\.Patching\.Done with the notes\./);
  const calls = replay.filter((u) => u.sessionUpdate === "tool_call");
  assert.deepEqual(calls.map((c) => [c.toolCallId, c.kind, c.status]), [
    ["call_read", "read", "completed"],
    ["call_patch", "edit", "completed"],
  ]);
  assert.ok(calls[1].content.some((c) => c.type === "diff" && c.newText === "final\n"), "the edit's diff is replayed");

  // It continues: the model gets the whole earlier conversation.
  assert.equal((await h2.prompt(sessionId, "continue")).stopReason, "end_turn");
  const req = fake.requests.at(-1).body;
  const all = JSON.stringify(req.messages);
  assert.match(all, /Finalise notes\.txt please/);
  assert.match(all, /Done with the notes\./);
  assert.equal(toolResults(fake.requests.at(-1)).length, 2);
  h2.assertSchemaClean();
});

scenario("a long session's replay arrives whole, in the log's order, before the session/load reply", async (ctx) => {
  // Promise: session/load reads the history back from the log in batches (sent as the editor
  // reads them); what arrives is every shown record, in order, the tool calls in their final state.
  const fake = await ctx.fakeModel([{ text: "Still here." }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const sessionId = "ses_long";
  const turns = 1200; // ~8 MB of log: many replay batches, more than the transport queues before waiting
  const t = (k) => new Date(Date.UTC(2026, 0, 1) + k * 1000).toISOString();
  const lines = [{ type: "header", t: t(0), v: 1, id: sessionId, cwd: ws, agent: "", mode: "default" }];
  for (let k = 0; k < turns; k++) {
    const out = `output ${k} `.repeat(150);
    lines.push(
      { type: "user", t: t(k), message: { role: "user", id: `msg_u${k}`, text: `question ${k}` }, prompt: [{ type: "text", text: `question ${k}` }] },
      { type: "assistant", t: t(k), message: { role: "assistant", id: `msg_a${k}`, text: `looking ${k}`, reasoning: `thinking ${k}`, toolCalls: [{ id: `call_${k}`, name: "read_file", arguments: "{}" }] } },
      { type: "tool_call", t: t(k), toolCallId: `call_${k}`, title: `Read ${k}`, name: "read_file", kind: "read", status: "pending", rawInput: { k } },
      { type: "tool_call", t: t(k), toolCallId: `call_${k}`, status: "completed", rawOutput: { output: out }, content: [{ type: "content", content: { type: "text", text: out } }] },
      { type: "tool_result", t: t(k), message: { role: "tool", text: out, toolCallId: `call_${k}` } },
      { type: "assistant", t: t(k), message: { role: "assistant", id: `msg_f${k}`, text: `answer ${k}.` } },
      { type: "turn_end", t: t(k), stopReason: "end_turn" },
    );
  }
  const dir = path.join(home.dataDir, "sessions");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), lines.map((l) => JSON.stringify(l) + "\n").join(""));

  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  await h.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replay = h.updatesOf(sessionId).filter((u) => u.sessionUpdate !== "available_commands_update");
  const expected = [];
  for (let k = 0; k < turns; k++) expected.push(`user question ${k}`, `thought thinking ${k}`, `agent looking ${k}`, `tool call_${k} completed`, `agent answer ${k}.`);
  const got = replay.slice(0, expected.length).map((u) =>
    u.sessionUpdate === "user_message_chunk" ? `user ${u.content.text}`
    : u.sessionUpdate === "agent_thought_chunk" ? `thought ${u.content.text}`
    : u.sessionUpdate === "agent_message_chunk" ? `agent ${u.content.text}`
    : u.sessionUpdate === "tool_call" ? `tool ${u.toolCallId} ${u.status}` : u.sessionUpdate);
  assert.deepEqual(got, expected, "every shown record, in order, before the reply");
  assert.equal(replay[expected.length - 2].content[0].content.text, `output ${turns - 1} `.repeat(150), "the last call with its final content");
  assert.equal(replay.slice(expected.length).filter((u) => u.sessionUpdate !== "session_info_update").length, 0);
  // It continues with the whole conversation.
  assert.equal((await h.prompt(sessionId, "and now?")).stopReason, "end_turn");
  assert.equal(toolResults(fake.requests.at(-1)).length, turns);
  h.assertSchemaClean();
});

scenario("session/list filters by cwd and pages; resume restores without replay; close and delete", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "one" }, { text: "two" }, { text: "three" }, { text: "resumed" }]);
  const wsA = ctx.workspace({});
  const wsB = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: wsA });
  await h.initialize();
  const a1 = (await h.newSession(wsA)).sessionId;
  await h.prompt(a1, "first in A");
  const a2 = (await h.newSession(wsA)).sessionId;
  await h.prompt(a2, "second in A");
  const b1 = (await h.newSession(wsB)).sessionId;
  await h.prompt(b1, "only in B");

  const inA = await h.request("session/list", { cwd: wsA });
  assert.deepEqual(inA.sessions.map((s) => s.sessionId).sort(), [a1, a2].sort());
  for (const s of inA.sessions) {
    assert.equal(s.cwd, wsA);
    assert.ok(s.title && s.updatedAt, "titles and updated times are listed");
  }
  const all = await h.request("session/list", {});
  assert.ok([a1, a2, b1].every((id) => all.sessions.some((s) => s.sessionId === id)));
  await assert.rejects(h.request("session/list", { cursor: "not-a-cursor" }), (e) => e.code === -32602);

  // close frees it; resume brings it back without replaying anything.
  await h.request("session/close", { sessionId: a1 });
  await assert.rejects(h.prompt(a1, "gone?"), (e) => e.code === -32002);
  const notCommands = (u) => u.sessionUpdate !== "available_commands_update";
  const before = h.updatesOf(a1).filter(notCommands).length;
  await h.request("session/resume", { sessionId: a1, cwd: wsA, mcpServers: [] });
  assert.equal(h.updatesOf(a1).filter(notCommands).length, before, "resume does not replay");
  assert.equal((await h.prompt(a1, "after resume")).stopReason, "end_turn");
  assert.match(JSON.stringify(fake.requests.at(-1).body.messages), /first in A/);

  await h.request("session/delete", { sessionId: b1 });
  await h.request("session/delete", { sessionId: b1 });  // idempotent
  const afterDelete = await h.request("session/list", {});
  assert.ok(!afterDelete.sessions.some((s) => s.sessionId === b1));
  await assert.rejects(h.request("session/load", { sessionId: b1, cwd: wsB, mcpServers: [] }), (e) => e.code === -32002);
  h.assertSchemaClean();
});

scenario("a deeper AGENTS.md joins with a successful read below it, not with a read that failed", async (ctx) => {
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_missing", name: "read_file", arguments: { path: "pkg/missing.c" } }] },
    { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "pkg/util.c" } }] },
    { text: "Done." },
  ]);
  const ws = ctx.workspace({ "pkg/AGENTS.md": "PKG-RULE-41d2: indent with tabs.\n", "pkg/util.c": "int util(void);\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "read pkg")).stopReason, "end_turn");
  const failed = toolResultText(fake.requests[1], "call_missing");
  assert.doesNotMatch(failed, /PKG-RULE-41d2/, `promise: a read that failed adds no AGENTS.md: ${failed}`);
  assert.match(toolResultText(fake.requests[2], "call_read"), /PKG-RULE-41d2/, "the successful read below pkg/ brings pkg/AGENTS.md");
  h.assertSchemaClean();
});

scenario("a long conversation is compacted: the next request carries the summary, AGENTS.md and the deeper AGENTS.md read before", async (ctx) => {
  const DEEPER = "In pkg, indent with tabs: rule pkg-7f3a9c.";
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "pkg/util.c" } }] },
    { text: "Big answer.", usage: { input: 900, output: 50 } },  // 950 of a 1000-token window
    { text: "SUMMARY: the user asked about the build." },        // the compaction request
    { text: "Answer after compaction." },
  ]);
  const ws = ctx.workspace({
    "AGENTS.md": "Always run make test.\n",
    "pkg/AGENTS.md": `${DEEPER}\n`,
    "pkg/util.c": "int util(void);\n",
  });
  const home = ctx.configHome({ modelUrl: fake.url, providerYaml: "context_window: 1000" });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "tell me about the build");
  // set-up: the deeper AGENTS.md reached the model only with the read, never in a system prompt
  assert.match(toolResultText(fake.requests[1], "call_read"), /pkg-7f3a9c/, "set-up: pkg/AGENTS.md joins the context with the read");
  assert.equal((await h.prompt(sessionId, "and the tests?")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 4);
  for (const r of fake.requests) assert.doesNotMatch(systemPrompt(r), /pkg-7f3a9c/, "set-up: pkg/AGENTS.md is never in the system prompt");
  const compaction = JSON.stringify(fake.requests[2].body.messages);
  assert.match(compaction, /Summarise this conversation/);
  const next = fake.requests[3].body;
  const text = JSON.stringify(next.messages);
  assert.match(text, /SUMMARY: the user asked about the build\./);
  assert.doesNotMatch(text, /Big answer\./, "older turns were replaced by the summary");
  assert.doesNotMatch(text, /int util\(void\)/, "the read itself was replaced by the summary");
  assert.match(text, /and the tests\?/);
  assert.match(JSON.stringify(next), /Always run make test\./, "AGENTS.md is still in the request");
  assert.ok(text.includes(DEEPER), "promise: a deeper AGENTS.md the model had read is re-added after compaction; " +
    `the request after compaction does not carry pkg/AGENTS.md's "${DEEPER}"`);
  assert.match(h.textOf(sessionId), /Compacted/, "the user sees that it happened");
  h.assertSchemaClean();
});

scenario("after /compact the context is the summary's size: the next prompt is not compacted again", async (ctx) => {
  const fake = await ctx.fakeModel([
    { text: "Big answer.", usage: { input: 900, output: 50 } },          // 950 of a 1000-token window
    { text: "SUMMARY of the big answer", usage: { input: 960, output: 20 } },  // the /compact request
    { text: "Next answer." },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, providerYaml: "context_window: 1000" });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "hello");
  assert.equal((await h.prompt(sessionId, "/compact")).stopReason, "end_turn");
  assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 3, "promise: after compaction the context is the summary, so the next prompt " +
    `goes straight to the model; got ${fake.requests.length} model requests (a second compaction?)`);
  assert.doesNotMatch(JSON.stringify(fake.requests[2].body.messages), /Summarise this conversation/);
  assert.match(JSON.stringify(fake.requests[2].body.messages), /SUMMARY of the big answer/);
  h.assertSchemaClean();
});

scenario("a /compact that gets no summary from the model leaves the conversation as it was", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      { text: "ANSWER-7d2f about pears." },
      { text: "" },  // the /compact request: the model writes nothing
      { text: "Next answer." },
    ],
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "PROMPT-3b9c: tell me about pears");
  await h.prompt(sessionId, "/compact");
  assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn");
  const sent = JSON.stringify(fake.requests.at(-1).body.messages);
  assert.match(sent, /PROMPT-3b9c/, `promise: a compaction that gets no summary leaves the conversation unchanged (the first prompt is still sent): ${sent}`);
  assert.match(sent, /ANSWER-7d2f/, "and the first answer");
  h.assertSchemaClean();
});

scenario("a compacted session, loaded after a restart, continues from the summary, not the old turns", async (ctx) => {
  const fake = await ctx.fakeModel([
    { text: "Old answer about apples." },
    { text: "SUMMARY-5e1a: the user asked about apples." },  // the /compact request
    { text: "After the restart." },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "tell me about apples");
  assert.equal((await h.prompt(sessionId, "/compact")).stopReason, "end_turn");
  process.kill(h.pid, "SIGKILL");
  await h.exited;

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal((await h2.prompt(sessionId, "go on")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 3);
  const text = JSON.stringify(fake.requests[2].body.messages);
  assert.match(text, /SUMMARY-5e1a/, "promise: a loaded session continues from the compaction summary");
  assert.doesNotMatch(text, /Old answer about apples/, "promise: the turns before the compaction are not sent again after a load");
  h2.assertSchemaClean();
});

scenario("/compact compacts on demand and is offered as a slash command", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "first" }, { text: "SUMMARY of first" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => h.updatesOf(sessionId, "available_commands_update").length > 0, { label: "commands" });
  assert.ok(h.updatesOf(sessionId, "available_commands_update").at(-1).availableCommands.some((c) => c.name === "compact"));
  await h.prompt(sessionId, "hello");
  assert.equal((await h.prompt(sessionId, "/compact")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 2);
  assert.match(JSON.stringify(fake.requests[1].body.messages), /Summarise this conversation/);
  assert.match(h.textOf(sessionId), /Compacted 2 messages/);
  h.assertSchemaClean();
});
