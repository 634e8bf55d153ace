import { test } from "node:test";
import assert from "node:assert/strict";
import { initialChatState, reduce, agentText, pendingPermissions, contentText, type ChatEvent, type ChatState } from "../src/core/chatState.js";

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

const text = (t: string) => ({ type: "text" as const, text: t });
const texts = (s: ChatState) => s.items.map((i) => [i.kind, (i as { text?: string }).text]);

test("content blocks as the chat shows them", () => {
  assert.equal(contentText(undefined), "", "no block, no text");
  assert.equal(contentText(null), "");
  assert.equal(contentText(text("hi")), "hi", "text as is");
  assert.equal(contentText({ type: "image", data: "", mimeType: "image/png" }), "[image]", "images as a placeholder");
  assert.equal(contentText({ type: "audio", data: "", mimeType: "audio/wav" }), "[audio]", "audio as a placeholder");
  assert.equal(contentText({ type: "resource_link", name: "a.txt", uri: "file:///a.txt" }), "[a.txt](file:///a.txt)", "a resource link as a Markdown link named after the resource");
  assert.equal(contentText({ type: "resource_link", name: "a.txt", title: "The A", uri: "file:///a.txt" }), "[The A](file:///a.txt)", "a titled resource link uses its title");
  assert.equal(contentText({ type: "resource", resource: { uri: "file:///a.txt", text: "body" } }), "\n```\nbody\n```\n", "an embedded text resource as a code block");
  assert.equal(contentText({ type: "resource", resource: { uri: "file:///b.bin", blob: "AA==" } }), "[file:///b.bin](file:///b.bin)", "an embedded binary resource as a link");
  assert.equal(contentText({ type: "other" } as never), "", "unknown blocks show nothing");
});

test("message chunks: one item per message; a new messageId starts a new item, for the user's messages too", () => {
  const s = run([
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("a"), messageId: "m1" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("b"), messageId: "m1" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("c"), messageId: "m2" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("d") } },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: text("t1"), messageId: "x" } },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: text("t2"), messageId: "y" } },
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: text("u1"), messageId: "p" } },
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: text("u2"), messageId: "q" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("e"), messageId: "m3" } },
  ] as ChatEvent[]);
  assert.deepEqual(texts(s), [["agent", "ab"], ["agent", "cd"], ["thought", "t1"], ["thought", "t2"], ["user", "u1"], ["user", "u2"], ["agent", "e"]], "chunks of one message join, a new message id starts a new item (two replayed user messages in a row stay two), a chunk without id joins the last");
  const m = s.items[1] as { messageId?: string };
  assert.equal(m.messageId, "m2", "an item keeps its message id");
  assert.equal(new Set(s.items.map((i) => i.id)).size, s.items.length, "every item has its own id");
  const noId = run([
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("a") } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("b"), messageId: "m9" } },
  ] as ChatEvent[]);
  assert.deepEqual(texts(noId), [["agent", "ab"]], "a message id after chunks without one joins them");
  const userFirst = run([{ type: "userPrompt", text: "typed" }, { type: "update", update: { sessionUpdate: "user_message_chunk", content: text(" more") } }]);
  assert.deepEqual(texts(userFirst), [["user", "typed more"]], "a replayed user chunk joins the user's message");
  const ids = run([
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: text("a"), messageId: "u1" } },
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: text("b"), messageId: "u1" } },
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: text("c"), messageId: "u2" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("x") } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("y"), messageId: "m1" } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("z"), messageId: "m2" } },
  ] as ChatEvent[]);
  assert.deepEqual(texts(ids), [["user", "ab"], ["user", "c"], ["agent", "xy"], ["agent", "z"]], "a message's chunks (a prompt with attachments) stay one message; an item without id takes the id of the chunk that joins it");
});

test("every change gives a new state revision, and a changed item a new item revision (so the view redraws it)", () => {
  let s = initialChatState();
  assert.equal(s.rev, 0);
  const steps: ChatEvent[] = [
    { type: "userPrompt", text: "q" },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("a") } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("b") } },
    { type: "update", update: { sessionUpdate: "available_commands_update", availableCommands: [] } },
    { type: "update", update: { sessionUpdate: "config_option_update", configOptions: [] } },
    { type: "update", update: { sessionUpdate: "usage_update", used: 1, size: 2 } },
    { type: "update", update: { sessionUpdate: "session_info_update", title: "T" } },
    { type: "update", update: { sessionUpdate: "plan", entries: [] } },
    { type: "turnStarted" },
    { type: "turnEnded", stopReason: "end_turn" },
    { type: "configOptions", configOptions: [] },
    { type: "notice", severity: "info", text: "n" },
    { type: "reset" },
  ];
  for (const e of steps) {
    const next = reduce(s, e);
    assert.ok(next.rev > s.rev, `${JSON.stringify(e)} gives a newer revision`);
    s = next;
  }
  const a = run([{ type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("a") } }]);
  const b = reduce(a, { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("b") } });
  assert.ok(b.items[0]!.rev > a.items[0]!.rev, "a grown message gets a newer item revision");
  assert.equal(b.items[0]!.id, a.items[0]!.id, "and keeps its id");
  const c = reduce(b, { type: "userPrompt", text: "x" });
  assert.equal(c.items[0]!.rev, b.items[0]!.rev, "an unchanged item keeps its revision");
  assert.equal(reduce(c, { type: "update", update: { sessionUpdate: "unknown_kind" } as never }), c, "an unknown update changes nothing");
});

test("tool calls: defaults, updates change only what they carry, raw input/output kept", () => {
  const s1 = run([{ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "" } as never }]);
  const t = s1.toolCalls.t1!;
  assert.deepEqual([t.title, t.kind, t.status, t.content, t.locations], ["", "other", "pending", [], []], "a bare tool call is an untitled pending 'other' call");
  assert.equal(s1.items[0]!.id, "tool-t1", "its chat item is tied to the tool call id");
  const bare = run([{ type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t9" } }]);
  assert.deepEqual([bare.toolCalls.t9!.title, bare.toolCalls.t9!.kind, bare.toolCalls.t9!.status], ["", "other", "pending"], "an update for an unknown call creates it with defaults");
  const s2 = run([
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Read", kind: "read", status: "pending", rawInput: { p: 1 }, content: [{ type: "content", content: text("x") }], locations: [{ path: "/a" }] } },
    { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", rawOutput: { ok: true } } },
  ]);
  const t2 = s2.toolCalls.t1!;
  assert.deepEqual([t2.title, t2.kind, t2.status], ["Read", "read", "completed"], "an update changes only the fields it carries");
  assert.deepEqual(t2.rawInput, { p: 1 }, "raw input is kept");
  assert.deepEqual(t2.rawOutput, { ok: true }, "raw output is kept");
  assert.equal(t2.content.length, 1, "content is kept when an update has none");
  assert.equal(t2.locations.length, 1, "locations are kept when an update has none");
  const s3 = reduce(s2, { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", title: "Read a", kind: "search", content: [], locations: [] } });
  assert.deepEqual([s3.toolCalls.t1!.title, s3.toolCalls.t1!.kind, s3.toolCalls.t1!.content, s3.toolCalls.t1!.locations], ["Read a", "search", [], []], "title, kind, content and locations are replaced by an update that has them");
  assert.ok(s3.toolCalls.t1!.rev > t2.rev, "an updated tool call gets a newer revision");
  assert.ok(s3.items[0]!.rev > s2.items[0]!.rev, "and its chat item too");
});

test("plan, modes, options, title, usage and notices from the server", () => {
  const plan = (c: string) => ({ type: "update" as const, update: { sessionUpdate: "plan" as const, entries: [{ content: c, priority: "high" as const, status: "pending" as const }] } });
  const s = run([plan("one"), { type: "userPrompt", text: "q" }, plan("two")]);
  assert.deepEqual(s.items.map((i) => i.kind), ["user", "plan"], "a new plan replaces the old one and moves to the end");
  assert.equal(s.plan[0]!.content, "two");
  const noModes = run([{ type: "update", update: { sessionUpdate: "current_mode_update", currentModeId: "x" } }, { type: "modeSet", modeId: "y" }]);
  assert.equal(noModes.modes, undefined, "a mode change without modes changes nothing");
  const modes = { currentModeId: "a", availableModes: [{ id: "a", name: "A" }, { id: "b", name: "B" }] };
  const m = run([{ type: "sessionStarted", sessionId: "s", modes }, { type: "modeSet", modeId: "b" }]);
  assert.equal(m.modes!.currentModeId, "b", "a mode set by the user is shown");
  assert.equal(m.modes!.availableModes.length, 2, "the other modes stay");
  const opts = [{ id: "o", name: "O", type: "select", currentValue: "1", options: [] }] as never;
  assert.deepEqual(run([{ type: "update", update: { sessionUpdate: "config_option_update", configOptions: opts } }]).configOptions, opts, "options pushed by the server are shown");
  assert.deepEqual(run([{ type: "configOptions", configOptions: opts }]).configOptions, opts, "options answered to a change are shown");
  const titled = run([{ type: "update", update: { sessionUpdate: "session_info_update", title: "T" } }]);
  assert.equal(reduce(titled, { type: "update", update: { sessionUpdate: "session_info_update", title: null } }).title, undefined, "a null title clears it");
  const untouched = reduce(titled, { type: "update", update: { sessionUpdate: "session_info_update" } });
  assert.equal(untouched, titled, "an info update without a title changes nothing");
  const started = reduce(titled, { type: "sessionStarted", sessionId: "s2" });
  assert.equal(started.title, "T", "a session start without a title keeps the shown one");
  assert.equal(reduce(titled, { type: "sessionStarted", sessionId: "s2", title: "New" }).title, "New", "a session start with a title shows it");
  assert.deepEqual([started.modes, started.configOptions], [undefined, []], "a session start without modes or options shows none");
  assert.equal(started.sessionId, "s2");
  const n = run([
    { type: "update", update: { sessionUpdate: "notice", severity: "error", title: "Boom", description: "the disk" } as never },
    { type: "update", update: { sessionUpdate: "notice", severity: "warning", title: "Careful" } as never },
    { type: "update", update: { sessionUpdate: "notice", severity: "whatever", title: "FYI" } as never },
  ]);
  assert.deepEqual(n.items.map((i) => [(i as { severity: string }).severity, (i as { text: string }).text, (i as { detail?: string }).detail]),
    [["error", "Boom", "the disk"], ["warning", "Careful", undefined], ["info", "FYI", undefined]],
    "server notices keep their severity (unknown ones as info), their title and their description");
  const own = run([{ type: "notice", severity: "warning", text: "mine" }]);
  assert.deepEqual(own.items.map((i) => [(i as { severity: string }).severity, (i as { text: string }).text]), [["warning", "mine"]], "the extension's notices are shown as given");
});

test("compactions: one item per id, placed at its first update, streamed summary, patched status, replayed whole", () => {
  const up = (u: object) => ({ type: "update" as const, update: u as never });
  const live = run([
    { type: "userPrompt", text: "/compact" },
    up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" }),
    up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: { type: "text", text: "They asked " } }),
    up({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "later" } }),
    up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: { type: "text", text: "about pears." } }),
  ]);
  assert.deepEqual(live.items.map((i) => i.kind), ["user", "compaction", "agent"], "the compaction stays where it began");
  const c = () => live.items[1] as Extract<ChatState["items"][number], { kind: "compaction" }>;
  assert.deepEqual([c().status, c().summary], ["in_progress", "They asked about pears."], "summary chunks append in order");
  const rev = c().rev;
  const done = reduce(live, up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "completed" }));
  const item = done.items[1] as typeof live.items[1] & { status: string; summary: string };
  assert.deepEqual([item.status, item.summary], ["completed", "They asked about pears."], "an update without summary keeps the streamed one");
  assert.ok(item.rev > rev, "the patched item is re-rendered");
  const failed = reduce(done, up({ sessionUpdate: "compaction_update", compactionId: "c2", status: "failed", error: "HTTP 500" }));
  assert.deepEqual(failed.items.map((i) => i.kind), ["user", "compaction", "agent", "compaction"], "another id is another item");
  assert.deepEqual([(failed.items[3] as { status: string }).status, (failed.items[3] as { error?: string }).error], ["failed", "HTTP 500"]);
  const cleared = reduce(done, up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "completed", summary: null }));
  assert.equal((cleared.items[1] as { summary: string }).summary, "", "summary: null clears it");
  const replayed = run([up({ sessionUpdate: "compaction_update", compactionId: "c9", status: "completed", summary: [{ type: "text", text: "S1 " }, { type: "text", text: "S2" }] })]);
  assert.deepEqual(replayed.items.map((i) => [i.kind, (i as { status: string }).status, (i as { summary: string }).summary]),
    [["compaction", "completed", "S1 S2"]], "a replayed compaction arrives whole, its summary replacing");
  const chunkFirst = run([up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c5", content: { type: "text", text: "x" } })]);
  assert.equal((chunkFirst.items[0] as { status: string }).status, "in_progress", "a first-seen id from a chunk is an in-progress compaction");
});

test("turns: stop reasons the user sees", () => {
  const end = (stopReason?: string, error?: string) => {
    const s = reduce(run([{ type: "turnStarted" }]), { type: "turnEnded", ...(stopReason ? { stopReason } : {}), ...(error ? { error } : {}) });
    return s.items.map((i) => [(i as { severity: string }).severity, (i as { text: string }).text]);
  };
  assert.deepEqual(end("end_turn"), [], "a normal end shows nothing");
  assert.deepEqual(end(), [], "no stop reason shows nothing");
  assert.deepEqual(end("cancelled"), [["info", "Stopped."]], "a cancelled turn says Stopped.");
  assert.deepEqual(end("max_tokens"), [["warning", "The model hit its output token limit."]]);
  assert.deepEqual(end("max_turn_requests"), [["warning", "Stopped: too many model requests in one turn."]]);
  assert.deepEqual(end("refusal"), [["warning", "The model refused to continue."]]);
  assert.deepEqual(end("odd_reason"), [["warning", "Stopped: odd_reason"]], "an unknown stop reason is named");
  assert.deepEqual(end("cancelled", "boom"), [["error", "boom"]], "an error wins over the stop reason");
  const s = run([{ type: "turnStarted" }, { type: "turnEnded", stopReason: "max_tokens" }]);
  assert.equal(s.lastStopReason, "max_tokens", "the last stop reason is kept");
  assert.equal(reduce(s, { type: "turnStarted" }).lastStopReason, undefined, "and cleared when a turn starts");
});

test("permissions: a prompt shows its tool call once; answers to unknown prompts change nothing; answered prompts stay answered", () => {
  const req = (toolCallId: string) => ({ sessionId: "s", toolCall: { toolCallId, title: "T" }, options: [{ optionId: "a", name: "A", kind: "allow_once" as const }] });
  const s = run([
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Known" } },
    { type: "permissionRequested", requestId: "r1", request: req("t1") },
    { type: "permissionRequested", requestId: "r2", request: req("t2") },
  ]);
  assert.deepEqual(s.items.map((i) => i.kind), ["tool", "permission", "tool", "permission"], "a prompt for a known tool call adds only the prompt; an unknown tool call is shown first");
  assert.equal(s.toolCalls.t1!.title, "Known", "a known tool call is not replaced by the prompt's copy");
  assert.equal(s.items[1]!.id, "perm-r1", "the prompt's item is tied to the request");
  assert.equal(reduce(s, { type: "permissionResolved", requestId: "nope", outcome: "a" }), s, "an answer to an unknown prompt changes nothing");
  const answered = reduce(s, { type: "permissionResolved", requestId: "r1", outcome: "a" });
  assert.ok(answered.items[1]!.rev > s.items[1]!.rev, "an answered prompt is redrawn");
  assert.deepEqual(pendingPermissions(answered).map((p) => p.requestId), ["r2"], "only unanswered prompts are pending");
  const ended = reduce(answered, { type: "turnEnded", stopReason: "end_turn" });
  assert.equal(ended.permissions.r1!.outcome, "a", "the end of a turn keeps given answers");
  assert.equal(ended.permissions.r2!.outcome, "cancelled", "and cancels the rest");
  const noTool = reduce(initialChatState(), { type: "permissionRequested", requestId: "r3", request: { sessionId: "s", toolCall: {} as never, options: [] } });
  assert.deepEqual(noTool.items.map((i) => i.kind), ["permission"], "a prompt without a tool call id shows only the prompt");
});

test("agentText joins only the agent's messages", () => {
  const s = run([
    { type: "userPrompt", text: "U" },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("A"), messageId: "1" } },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: text("T") } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: text("B"), messageId: "2" } },
  ]);
  assert.equal(agentText(s), "AB");
});

test("permissions: the diff a permission request carries is shown even when its tool call already exists", () => {
  const diff = { type: "diff" as const, path: "/w/a.txt", oldText: "old\n", newText: "new\n" };
  const s = run([
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit a.txt", kind: "edit", status: "pending" } },
    { type: "permissionRequested", requestId: "r1", request: { sessionId: "s", toolCall: { toolCallId: "t1", content: [diff] }, options: [{ optionId: "a", name: "Allow", kind: "allow_once" }] } },
  ]);
  assert.deepEqual(s.toolCalls.t1!.content, [diff], "the proposed diff reaches the tool call the user is asked about");
  assert.equal(s.toolCalls.t1!.title, "Edit a.txt", "the tool call keeps what it had");
  assert.deepEqual(s.items.map((i) => i.kind), ["tool", "permission"], "no second tool item");
  const toolItem = s.items[0]!;
  assert.ok(toolItem.rev > 1, "the tool item is re-rendered");
});

test("the end of a turn lists the files its edits changed (only this turn's tool calls)", () => {
  const edit = (id: string, path: string, oldText: string | null, newText: string): ChatEvent => ({
    type: "update",
    update: { sessionUpdate: "tool_call", toolCallId: id, title: `Edit ${path}`, kind: "edit", status: "completed", content: [{ type: "diff", path, oldText, newText }] },
  });
  const s = run([
    { type: "turnStarted" },
    edit("t1", "/w/old", "o0", "o1"),
    { type: "turnEnded", stopReason: "end_turn" },
    { type: "userPrompt", text: "more" },
    { type: "turnStarted" },
    edit("t2", "/w/a", "a0", "a1"),
    edit("t3", "/w/n", null, "n"),
    { type: "turnEnded", stopReason: "end_turn" },
  ]);
  const changes = s.items.filter((i) => i.kind === "changes") as Extract<ChatState["items"][number], { kind: "changes" }>[];
  assert.equal(changes.length, 2, "each turn with edits gets its list");
  assert.deepEqual(changes[1]!.files, [{ path: "/w/a", before: "a0", after: "a1" }, { path: "/w/n", before: null, after: "n" }], "the second list has only the second turn's files");
  assert.equal(s.items[s.items.length - 1]!.kind, "changes", "the list comes at the end of the turn");
  const undone = reduce(s, { type: "turnUndone", itemId: changes[1]!.id, outcomes: [{ path: "/w/a", result: "restored" }] });
  const after = undone.items.find((i) => i.id === changes[1]!.id) as { undo?: unknown; rev: number };
  assert.deepEqual(after.undo, [{ path: "/w/a", result: "restored" }], "the outcome of Undo is kept on the list");
  assert.ok(after.rev > changes[1]!.rev, "and the list is redrawn");
  assert.equal(run([{ type: "turnStarted" }, { type: "turnEnded", stopReason: "end_turn" }]).items.length, 0, "a turn without edits adds no list");
});

test("a new chat is empty: no items, tool calls, prompts, plan, options or commands, idle", () => {
  assert.deepEqual(initialChatState(), { items: [], toolCalls: {}, permissions: {}, plan: [], configOptions: [], commands: [], busy: false, nextId: 1, rev: 0 });
});

test("every item has an id of its own (the webview keys its elements by it)", () => {
  const up = (u: object): ChatEvent => ({ type: "update", update: u as never });
  const s = run([
    { type: "userPrompt", text: "a" },
    up({ sessionUpdate: "plan", entries: [] }),
    { type: "notice", severity: "info", text: "n1" },
    { type: "notice", severity: "info", text: "n2" },
    up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "completed" }),
    up({ sessionUpdate: "compaction_update", compactionId: "c2", status: "completed" }),
    up({ sessionUpdate: "tool_call", toolCallId: "t1", title: "T" }),
    { type: "notice", severity: "info", text: "n3" },
    { type: "userPrompt", text: "b" },
  ]);
  const ids = s.items.map((i) => i.id);
  assert.equal(ids.length, 9);
  assert.ok(ids.every((id) => id.length > 0), `no empty id: ${JSON.stringify(ids)}`);
  assert.equal(new Set(ids).size, ids.length, `no two items share an id: ${JSON.stringify(ids)}`);
  const later = reduce(s, up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: text("x") }));
  assert.deepEqual(later.items.map((i) => i.id), ids, "a patched item keeps its id");
});

test("a change redraws only the item it concerns: other items keep their revision", () => {
  const up = (u: object): ChatEvent => ({ type: "update", update: u as never });
  const req = (toolCallId: string) => ({ sessionId: "s", toolCall: { toolCallId }, options: [{ optionId: "a", name: "A", kind: "allow_once" as const }] });
  const s = run([
    { type: "userPrompt", text: "q" },
    up({ sessionUpdate: "tool_call", toolCallId: "t1", title: "one" }),
    up({ sessionUpdate: "tool_call", toolCallId: "t2", title: "two" }),
    { type: "permissionRequested", requestId: "r1", request: req("t1") },
    { type: "permissionRequested", requestId: "r2", request: req("t2") },
  ]);
  const revs = (x: ChatState) => Object.fromEntries(x.items.map((i) => [i.id, i.rev]));
  const changed = (a: ChatState, b: ChatState) => Object.keys(revs(b)).filter((id) => revs(a)[id] !== revs(b)[id]);
  const t = reduce(s, up({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" }));
  assert.deepEqual(changed(s, t), ["tool-t1"], "a tool call update redraws that tool call only");
  const p = reduce(s, { type: "permissionResolved", requestId: "r2", outcome: "a" });
  assert.deepEqual(changed(s, p), ["perm-r2"], "an answer redraws that prompt only");
});

test("revisions grow on session start and mode changes too", () => {
  const modes = { currentModeId: "a", availableModes: [{ id: "a", name: "A" }, { id: "b", name: "B" }] };
  let s = reduce(reduce(initialChatState(), { type: "notice", severity: "info", text: "x" }), { type: "notice", severity: "info", text: "y" });
  for (const e of [
    { type: "sessionStarted", sessionId: "s", modes },
    { type: "update", update: { sessionUpdate: "current_mode_update", currentModeId: "b" } },
    { type: "modeSet", modeId: "a" },
  ] as ChatEvent[]) {
    const next = reduce(s, e);
    assert.ok(next.rev > s.rev, `${e.type} gives a newer revision`);
    s = next;
  }
});

test("the reducer leaves the state it was given untouched", () => {
  const up = (u: object): ChatEvent => ({ type: "update", update: u as never });
  const s = run([up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" }), up({ sessionUpdate: "plan", entries: [] }), { type: "userPrompt", text: "q" }]);
  const copy = structuredClone(s);
  reduce(s, up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: text("sum") }));
  reduce(s, up({ sessionUpdate: "plan", entries: [{ content: "p", priority: "high", status: "pending" }] }));
  assert.deepEqual(s, copy, "the previous state is not changed by a compaction patch or a new plan");
});

test("a plan or a compaction as the first or only item", () => {
  const up = (u: object): ChatEvent => ({ type: "update", update: u as never });
  const plan = up({ sessionUpdate: "plan", entries: [] });
  assert.deepEqual(run([{ type: "userPrompt", text: "q" }, plan]).items.map((i) => i.kind), ["user", "plan"], "the first plan is added after what is there");
  const c = run([
    up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "in_progress" }),
    up({ sessionUpdate: "compaction_summary_chunk", compactionId: "c1", content: text("a") }),
    up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "failed", error: "HTTP 500" }),
    up({ sessionUpdate: "compaction_update", compactionId: "c1", status: "failed" }),
  ]);
  assert.equal(c.items.length, 1, "a compaction that is the first item is patched in place");
  assert.deepEqual([(c.items[0] as { summary: string }).summary, (c.items[0] as { error?: string }).error], ["a", "HTTP 500"], "an update without error keeps the error");
});

test("permission prompts: an unknown tool call is shown with its title; a prompt without a tool call shows just the prompt", () => {
  const s = run([{ type: "permissionRequested", requestId: "r1", request: { sessionId: "s", toolCall: { toolCallId: "t1", title: "Run ls", kind: "execute" }, options: [] } }]);
  assert.deepEqual([s.toolCalls.t1!.title, s.toolCalls.t1!.kind], ["Run ls", "execute"]);
  const bare = reduce(initialChatState(), { type: "permissionRequested", requestId: "r2", request: { sessionId: "s", options: [] } as never });
  assert.deepEqual(bare.items.map((i) => i.kind), ["permission"]);
});

test("raw output stays when a later update has none", () => {
  const s = run([
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "x", rawOutput: { ok: 1 } } },
    { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" } },
  ]);
  assert.ok("rawOutput" in s.toolCalls.t1!);
  assert.deepEqual(s.toolCalls.t1!.rawOutput, { ok: 1 });
  const none = run([{ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t2", title: "y" } }, { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: "t2", status: "completed" } }]);
  assert.deepEqual(Object.keys(none.toolCalls.t2!).sort(), ["content", "kind", "locations", "rev", "status", "title", "toolCallId"], "no raw output appears from nowhere");
});

test("a turn's changes: listed once, at the end of a running turn; Undo marks only its own list", () => {
  const edit = (id: string, path: string): ChatEvent => ({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: id, title: "E", kind: "edit", status: "completed", content: [{ type: "diff", path, oldText: "a", newText: "b" }] } });
  const s = run([{ type: "turnStarted" }, edit("t1", "/w/1"), { type: "turnEnded", stopReason: "end_turn" }, { type: "turnStarted" }, edit("t2", "/w/2"), { type: "turnEnded", stopReason: "end_turn" }]);
  const again = reduce(s, { type: "turnEnded", error: "The OpenVaala server stopped during the turn." });
  assert.equal(again.items.filter((i) => i.kind === "changes").length, 2, "the end of a turn already ended lists nothing again");
  const [first, second] = s.items.filter((i) => i.kind === "changes");
  const undone = reduce(s, { type: "turnUndone", itemId: second!.id, outcomes: [] });
  assert.deepEqual(undone.items.filter((i) => "undo" in i).map((i) => i.id), [second!.id], "only the list undone is marked");
  const notice = reduce(s, { type: "notice", severity: "info", text: "n" });
  const wrong = reduce(notice, { type: "turnUndone", itemId: notice.items.at(-1)!.id, outcomes: [] });
  assert.deepEqual(wrong.items.filter((i) => "undo" in i), [], "an id that is no list of changes marks nothing");
  void first;
});
