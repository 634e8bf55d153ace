// update_plan: the model's steps shown as the session's plan (ACP `plan` update), checked
// before they are shown, kept in the session log and shown again by session/load.
import assert from "node:assert/strict";
import { scenario, toolResults, toolNames } from "./harness.mjs";

const step = (s, status) => ({ step: s, status });
const entry = (content, status) => ({ content, priority: "medium", status });

scenario("update_plan shows the plan in the editor, refuses a malformed one, and session/load shows it again", async (ctx) => {
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_plan1", name: "update_plan", arguments: { plan: [step("Read the parser", "in_progress"), step("Port it", "pending")] } }] },
    { toolCalls: [{ id: "call_plan2", name: "update_plan", arguments: { plan: [step("Read the parser", "in_progress"), step("Port it", "in_progress")] } }] },
    { toolCalls: [{ id: "call_plan3", name: "update_plan", arguments: { explanation: "parser read", plan: [step("Read the parser", "completed"), step("Port it", "in_progress")] } }] },
    { text: "Porting now." },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "read_only");  // a plan changes nothing: allowed in every mode
  assert.equal((await h.prompt(sessionId, "port the parser")).stopReason, "end_turn");
  assert.ok(toolNames(fake.requests[0]).includes("update_plan"));

  const plans = h.updatesOf(sessionId, "plan").map((u) => u.entries);
  assert.deepEqual(plans, [
    [entry("Read the parser", "in_progress"), entry("Port it", "pending")],
    [entry("Read the parser", "completed"), entry("Port it", "in_progress")],
  ], "the malformed plan is not shown");
  const calls = h.updatesOf(sessionId, "tool_call").filter((u) => u.toolCallId.startsWith("call_plan"));
  assert.deepEqual(calls.map((c) => [c.title, c.kind]), [["Update plan", "think"], ["Update plan", "think"], ["Update plan", "think"]]);
  const status = (id) => h.updatesOf(sessionId, "tool_call_update").filter((u) => u.toolCallId === id && u.status).at(-1).status;
  assert.deepEqual(["call_plan1", "call_plan2", "call_plan3"].map(status), ["completed", "failed", "completed"]);
  assert.match(toolResults(fake.requests[1]).at(-1).content, /Plan updated \(2 steps\)/);
  assert.match(toolResults(fake.requests[2]).at(-1).content, /At most one step may be in_progress; 2 are\./);
  h.assertSchemaClean();
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replayed = h2.updatesOf(sessionId, "plan").map((u) => u.entries);
  assert.deepEqual(replayed.at(-1), [entry("Read the parser", "completed"), entry("Port it", "in_progress")]);
  assert.equal(replayed.length, 2);
  h2.assertSchemaClean();
});
