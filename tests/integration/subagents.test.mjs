// spawn_agent: a sub-conversation visible as a tool call, with its own agent, SubagentStart /
// SubagentStop hooks, its result returned to the parent, and cancel reaching it.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResults, waitUntil } from "./harness.mjs";

function hookFiles(configDir, log) {
  const dir = path.join(configDir, "hooks");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "sub.yaml"),
    "hooks:\n  SubagentStart:\n    - matcher: reviewer\n      hooks:\n        - type: command\n          command: cat >> " + log + "; echo 'Focus on tests.'\n" +
      "  SubagentStop:\n    - hooks:\n        - type: command\n          command: cat >> " + log + "\n",
  );
}

scenario("spawn_agent runs a sub-agent: its tool calls show in the session, hooks fire, the parent gets its report", async (ctx) => {
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
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "get the notes reviewed")).stopReason, "end_turn");

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
