import { test } from "node:test";
import assert from "node:assert/strict";
import { initialChatState, reduce, agentText, pendingPermissions, type ChatEvent } from "../src/core/chatState.js";

const run = (events: ChatEvent[]) => events.reduce(reduce, initialChatState());

test("chunks stream into one agent item; thoughts are separate items", () => {
  const s = run([
    { type: "userPrompt", text: "hi" },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking" } } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" } } },
  ]);
  assert.deepEqual(s.items.map((i) => i.kind), ["user", "thought", "agent"]);
  assert.equal(agentText(s), "Hello");
});

test("tool calls: created, updated in place (content replaced), item revs bump", () => {
  const s1 = run([
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit a.txt", kind: "edit", status: "pending", locations: [{ path: "/w/a.txt", line: 3 }] } },
  ]);
  const rev1 = s1.items[0]!.rev;
  const s2 = reduce(s1, {
    type: "update",
    update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: [{ type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" }] },
  });
  assert.equal(s2.items.length, 1);
  assert.ok(s2.items[0]!.rev > rev1);
  const t = s2.toolCalls.t1!;
  assert.equal(t.status, "completed");
  assert.equal(t.kind, "edit");
  assert.equal(t.title, "Edit a.txt");
  assert.equal(t.locations[0]!.line, 3);
  assert.equal(t.content[0]!.type, "diff");
});

test("plans replace the previous plan; modes, config options, commands, usage, title", () => {
  const s = run([
    { type: "sessionStarted", sessionId: "s", modes: { currentModeId: "a", availableModes: [{ id: "a", name: "A" }, { id: "b", name: "B" }] } },
    { type: "update", update: { sessionUpdate: "plan", entries: [{ content: "one", priority: "high", status: "pending" }] } },
    { type: "update", update: { sessionUpdate: "plan", entries: [{ content: "one", priority: "high", status: "completed" }] } },
    { type: "update", update: { sessionUpdate: "current_mode_update", currentModeId: "b" } },
    { type: "update", update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "x", description: "y" }] } },
    { type: "update", update: { sessionUpdate: "session_info_update", title: "T" } },
    { type: "update", update: { sessionUpdate: "usage_update", used: 10, size: 100 } },
  ]);
  assert.equal(s.items.filter((i) => i.kind === "plan").length, 1);
  assert.equal(s.plan[0]!.status, "completed");
  assert.equal(s.modes!.currentModeId, "b");
  assert.equal(s.commands[0]!.name, "x");
  assert.equal(s.title, "T");
  assert.deepEqual(s.usage, { used: 10, size: 100 });
});

test("permissions: pending until resolved; a finished turn cancels leftovers; stop reasons become notices", () => {
  const req = { sessionId: "s", toolCall: { toolCallId: "t9", title: "Run ls", kind: "execute" as const }, options: [{ optionId: "a", name: "Allow", kind: "allow_once" as const }] };
  let s = run([{ type: "turnStarted" }, { type: "permissionRequested", requestId: "r1", request: req }]);
  assert.equal(s.busy, true);
  assert.equal(pendingPermissions(s).length, 1);
  assert.ok(s.toolCalls.t9, "the permission's tool call is shown");
  s = reduce(s, { type: "turnEnded", stopReason: "cancelled" });
  assert.equal(pendingPermissions(s).length, 0);
  assert.equal(s.permissions.r1!.outcome, "cancelled");
  assert.equal(s.busy, false);
  const last = s.items[s.items.length - 1]!;
  assert.equal(last.kind, "notice");
  s = reduce(s, { type: "turnEnded", error: "boom" });
  assert.equal((s.items[s.items.length - 1] as { text: string }).text, "boom");
});
