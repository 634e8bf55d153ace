// spawn_agent: a sub-conversation visible as a tool call, with its own agent, SubagentStart /
// SubagentStop hooks, its result returned to the parent, and cancel reaching it.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResults, toolResultText, waitUntil, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

function hookFiles(configDir, log) {
  const dir = path.join(configDir, "hooks");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "sub.yaml"),
    "hooks:\n  SubagentStart:\n    - matcher: reviewer\n      hooks:\n        - type: command\n          command: cat >> " + log + "; echo 'Focus on tests.'\n" +
      "  SubagentStop:\n    - hooks:\n        - type: command\n          command: cat >> " + log + "\n",
  );
}

// The parent spawns the reviewer, which reads notes.txt and reports; hooks log to `log`.
async function reviewNotes(ctx, clientCapabilities = DEFAULT_CLIENT_CAPABILITIES) {
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_sub", name: "spawn_agent", arguments: { prompt: "Check notes.txt", agent: "reviewer" } }] },
    { toolCalls: [{ id: "call_sub_read", name: "read_file", arguments: { path: "notes.txt" } }] },
    { text: "Report: notes.txt says hello." },
    { text: "The reviewer found the notes fine." },
  ]);
  const ws = ctx.workspace({ "notes.txt": "hello\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  fs.mkdirSync(path.join(home.configDir, "agents"), { recursive: true });
  fs.writeFileSync(path.join(home.configDir, "agents/reviewer.yaml"), "name: reviewer\ninstructions: You review carefully and report briefly.\n");
  const log = path.join(home.root, "subagent-hooks.log");
  hookFiles(home.configDir, log);
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities, unstableSdk: true });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "get the notes reviewed")).stopReason, "end_turn");
  return { fake, ws, home, log, h, sessionId };
}

scenario("spawn_agent runs a sub-agent: its tool calls show in the session, hooks fire, the parent gets its report", async (ctx) => {
  const { fake, log, h, sessionId } = await reviewNotes(ctx);

  assert.ok(fake.requests[0].body.tools.some((t) => t.function.name === "spawn_agent"));
  const child = fake.requests[1].body;
  assert.match(child.messages[0].content, /You review carefully and report briefly\./, "the sub-agent has its own instructions");
  assert.match(JSON.stringify(child.messages), /Check notes\.txt/);
  assert.match(JSON.stringify(child.messages), /Focus on tests\./, "SubagentStart context reaches the sub-agent");
  assert.ok(!child.tools.some((t) => t.function.name === "spawn_agent"), "no nested spawning");
  assert.ok(fake.requests[0].body.tools.some((t) => t.function.name === "update_plan"));
  assert.ok(!child.tools.some((t) => t.function.name === "update_plan"), "the plan belongs to the top-level agent");

  const updates = h.updatesOf(sessionId);
  assert.ok(updates.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_sub" && /reviewer/.test(u.title)));
  assert.ok(updates.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_sub_read" && u.kind === "read"),
            "the sub-agent's tool calls are visible");
  const done = updates.filter((u) => u.toolCallId === "call_sub" && u.sessionUpdate === "tool_call_update").at(-1);
  assert.equal(done.status, "completed");
  assert.match(toolResults(fake.requests[3])[0].content, /Report: notes\.txt says hello\./);
  assert.deepEqual(h.updatesOf(null, "subagent_update"), [], "no sub-agent sessions for an editor that did not ask for them");

  const events = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => e.hook_event_name), ["SubagentStart", "SubagentStop"]);
  assert.equal(events[0].agent_type, "reviewer");
  assert.equal(events[0].agent_id, "call_sub");
  assert.ok(events[0].turn_id, "SubagentStart carries a turn id");
  assert.equal(events[0].turn_id, events[1].turn_id, "SubagentStart and SubagentStop carry the same turn id, so a script can pair them");
  assert.equal(events[1].last_assistant_message, "Report: notes.txt says hello.");
  assert.equal(events[1].stop_hook_active, false);
  h.assertSchemaClean();
});

scenario("cancel reaches a running sub-agent", async (ctx) => {
  const chunks = Array.from({ length: 50 }, (_, i) => `w${i} `);
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_sub", name: "spawn_agent", arguments: { prompt: "write a lot" } }] },
    { chunks, chunkDelayMs: 200 },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const prompt = h.prompt(sessionId, "delegate");
  await waitUntil(() => h.textOf(sessionId).includes("w0"), { label: "sub-agent streaming" });
  await h.cancel(sessionId);
  const res = await prompt;
  assert.equal(res.stopReason, "cancelled");
  assert.equal(fake.requests.length, 2);
  h.assertSchemaClean();
});

// Editors that advertise the (unstable) subagents capability get each sub-agent as a session of
// its own. Messages of the unstable schema are validated against it (see the harness).
const SUBAGENT_CLIENT = { ...DEFAULT_CLIENT_CAPABILITIES, subagents: {} };

scenario("with the subagents capability a spawned agent is a session of its own: announced, its own updates, loadable", async (ctx) => {
  const { fake, ws, home, log, h, sessionId } = await reviewNotes(ctx, SUBAGENT_CLIENT);

  const sub = h.updatesOf(sessionId, "subagent_update");
  assert.equal(sub.length, 2, `one announcement and one end on the parent: ${JSON.stringify(sub)}`);
  const child = sub[0].sessionId;
  assert.ok(child && child !== sessionId, "the sub-agent has a session id of its own");
  assert.equal(sub[0].title, "reviewer");
  assert.equal(sub[0].description, "Check notes.txt");
  assert.equal(sub[0].cwd, ws);
  assert.deepEqual(sub[0].state, { state: "running" });
  assert.deepEqual(sub[0].capabilities, { cancel: {} });
  assert.equal(sub[0]._meta?.openvaala?.toolCallId, "call_sub", "the announcement names the spawn_agent call");
  assert.deepEqual(sub[1], { sessionUpdate: "subagent_update", sessionId: child, state: { state: "idle", stopReason: "end_turn" } });

  const childUpdates = h.updatesOf(child);
  assert.ok(childUpdates.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_sub_read"), "the child's tool calls go to the child");
  assert.equal(h.textOf(child), "Report: notes.txt says hello.");
  assert.ok(!h.updatesOf(sessionId).some((u) => u.toolCallId === "call_sub_read"), "the parent does not get the child's tool calls");
  assert.ok(!h.textOf(sessionId).includes("Report:"), "nor its text");
  const at = (pred) => h.updates.findIndex(pred);
  const announced = at((u) => u.sessionId === sessionId && u.update.sessionUpdate === "subagent_update");
  const firstChild = at((u) => u.sessionId === child);
  const lastChild = h.updates.findLastIndex((u) => u.sessionId === child);
  const ended = h.updates.findLastIndex((u) => u.sessionId === sessionId && u.update.sessionUpdate === "subagent_update");
  const callDone = at((u) => u.update.toolCallId === "call_sub" && u.update.status === "completed");
  assert.ok(announced < firstChild && lastChild < ended && ended < callDone,
            `announce, child traffic, end, then the spawn call completes (${announced} ${firstChild} ${lastChild} ${ended} ${callDone})`);
  assert.match(toolResults(fake.requests[3])[0].content, /Report: notes\.txt says hello\./, "the parent model still gets the report");

  const events = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => e.hook_event_name), ["SubagentStart", "SubagentStop"]);
  assert.deepEqual(events.map((e) => e.session_id), [sessionId, sessionId], "hooks keep naming the session the user started");
  assert.equal(events[1].agent_id, "call_sub");
  assert.equal(events[0].turn_id, events[1].turn_id);

  const listed = (await h.request("session/list", {})).sessions.map((s) => s.sessionId);
  assert.deepEqual(listed, [sessionId], "sub-agent sessions are not listed: the parent leads to them");
  h.assertSchemaClean();
  await h.close();

  // After a restart: the child loads on its own; the parent's replay announces it again.
  const h2 = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: SUBAGENT_CLIENT, unstableSdk: true });
  await h2.initialize();
  await h2.request("session/load", { sessionId: child, cwd: ws, mcpServers: [] });
  const replay = h2.updatesOf(child);
  assert.equal(replay.find((u) => u.sessionUpdate === "user_message_chunk")?.content.text, "Check notes.txt");
  assert.ok(replay.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_sub_read" && u.status === "completed"));
  assert.equal(h2.textOf(child), "Report: notes.txt says hello.");
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(h2.updatesOf(sessionId, "subagent_update").map((u) => [u.sessionId, u.state]), [
    [child, { state: "running" }],
    [child, { state: "idle", stopReason: "end_turn" }],
  ]);
  h2.assertSchemaClean();

  // An editor without the capability is told nothing of sub-agent sessions.
  const h3 = await ctx.agent({ env: home.env, cwd: ws, unstableSdk: true });  // would see them if sent
  await h3.initialize();
  await h3.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(h3.updatesOf(sessionId, "subagent_update"), [], "an editor without the capability is not told of sub-agent sessions");
  h3.assertSchemaClean();
});

scenario("sub-agent sessions: cancelling the parent's turn cancels the child; cancelling the child stops only it", async (ctx) => {
  const chunks = Array.from({ length: 50 }, (_, i) => `w${i} `);
  const script = [
    { toolCalls: [{ id: "call_a", name: "spawn_agent", arguments: { prompt: "write a lot" } }] },
    { chunks, chunkDelayMs: 200 },
    { toolCalls: [{ id: "call_b", name: "spawn_agent", arguments: { prompt: "write more" } }] },
    { chunks, chunkDelayMs: 200 },
    { text: "Fine, without it." },
  ];
  const { fake, ws, h } = await ctx.setup({ script, agentOpts: { clientCapabilities: SUBAGENT_CLIENT, unstableSdk: true } });
  const { sessionId } = await h.newSession(ws);

  const first = h.prompt(sessionId, "delegate");
  const a = (await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "subagent_update")).update.sessionId;
  await waitUntil(() => h.textOf(a).includes("w0"), { label: "the child streaming" });
  await h.cancel(sessionId);
  assert.equal((await first).stopReason, "cancelled");
  assert.deepEqual(h.updatesOf(sessionId, "subagent_update").at(-1), {
    sessionUpdate: "subagent_update", sessionId: a, state: { state: "idle", stopReason: "cancelled" },
  }, "the child's end is told before the parent's turn ends");

  const second = h.prompt(sessionId, "delegate again");
  const b = (await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "subagent_update" && u.update.sessionId !== a)).update.sessionId;
  await waitUntil(() => h.textOf(b).includes("w0"), { label: "the second child streaming" });
  await h.cancel(b);
  assert.equal((await second).stopReason, "end_turn", "the parent goes on when only the child was stopped");
  assert.match(toolResultText(fake.requests[4], "call_b"), /stopped/, "the parent model is told the sub-agent was stopped");
  assert.equal(h.textOf(sessionId).endsWith("Fine, without it."), true);
  h.assertSchemaClean();
});
