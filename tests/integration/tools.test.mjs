// Tool turns: read_file / apply_patch / bash through the client (fs + terminal) and locally,
// permissions and session modes.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, expectRpcError, toolCallStatuses, toolCallText, toolCallsById, toolResultText, toolResults } from "./harness.mjs";

const PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old line\n+new line\n*** End Patch";
const patchFor = (file, from, to) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch`;

function toolTurnScript() {
  return [
    { text: "Reading the file.", toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "hello.txt" } }] },
    { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
    { toolCalls: [{ id: "call_bash", name: "bash", arguments: { command: "cat hello.txt" } }] },
    { text: "Done: the file now says new line." },
  ];
}

/** Merged view of one tool call: last non-undefined value of each field; contents/locations concatenated. */
function merged(updates) {
  const m = { content: [], locations: [], statuses: [] };
  for (const u of updates) {
    for (const [k, v] of Object.entries(u)) {
      if (v === undefined || v === null) continue;
      if (k === "content") m.content.push(...v);
      else if (k === "locations") m.locations.push(...v);
      else m[k] = v;
    }
    if (u.status) m.statuses.push(u.status);
  }
  return m;
}

function toolCallOfKind(h, sessionId, kind) {
  const all = [...toolCallsById(h, sessionId).values()].map(merged);
  return all.filter((t) => t.kind === kind);
}

/** Asserts the model's request carries a tool result for `id` in the provider's own format; returns its text. */
function assertToolResult(req, provider, id) {
  const msgs = req.body.messages;
  if (provider === "openai") {
    const m = msgs.find((x) => x.role === "tool" && x.tool_call_id === id);
    assert.ok(m, `OpenAI request has a role:"tool" message with tool_call_id ${id}: ${JSON.stringify(msgs).slice(0, 2000)}`);
    const a = msgs.find((x) => x.role === "assistant" && (x.tool_calls ?? []).some((tc) => tc.id === id));
    assert.ok(a, `the assistant message with tool_calls[${id}] is replayed before its result`);
    assert.ok(msgs.indexOf(a) < msgs.indexOf(m));
  } else {
    const holder = msgs.find((x) => x.role === "user" && Array.isArray(x.content) && x.content.some((b) => b.type === "tool_result" && b.tool_use_id === id));
    assert.ok(holder, `Anthropic request has a tool_result block for ${id}: ${JSON.stringify(msgs).slice(0, 2000)}`);
    const a = msgs.find((x) => x.role === "assistant" && Array.isArray(x.content) && x.content.some((b) => b.type === "tool_use" && b.id === id));
    assert.ok(a, `the assistant tool_use ${id} is replayed before its result`);
    assert.ok(msgs.indexOf(a) < msgs.indexOf(holder));
  }
  const r = toolResults(req).find((x) => x.id === id);
  return r.content;
}

for (const provider of ["openai", "anthropic"]) {
  scenario(`full tool turn through the client's fs and terminal (${provider})`, async (ctx) => {
    const { fake, ws, h } = await ctx.setup({ provider, script: toolTurnScript(), files: { "hello.txt": "old line\n" } });
    const file = path.join(ws, "hello.txt");
    const { sessionId } = await h.newSession(ws);
    const res = await h.prompt(sessionId, "Fix hello.txt and show it");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(fs.readFileSync(file, "utf8"), "new line\n");
    assert.match(h.textOf(sessionId), /Done: the file now says new line\./);

    // tool calls: read, edit, execute, in that order
    const calls = [...toolCallsById(h, sessionId).values()].map(merged);
    assert.deepEqual(calls.map((c) => c.kind), ["read", "edit", "execute"]);
    const [read, edit, exec] = calls;
    for (const c of calls) assert.equal(c.statuses.at(-1), "completed", `${c.kind} completed: ${JSON.stringify(c.statuses)}`);
    assert.ok(read.locations.some((l) => l.path === file), `read locations ${JSON.stringify(read.locations)}`);
    assert.ok(edit.locations.some((l) => l.path === file), `edit locations ${JSON.stringify(edit.locations)}`);
    const diff = edit.content.find((c) => c.type === "diff");
    assert.ok(diff, `edit has diff content: ${JSON.stringify(edit.content)}`);
    assert.equal(diff.path, file);
    assert.equal(diff.oldText, "old line\n");
    assert.equal(diff.newText, "new line\n");
    const term = exec.content.find((c) => c.type === "terminal");
    assert.ok(term, `bash has terminal content: ${JSON.stringify(exec.content)}`);
    assert.ok(h.terminals.has(term.terminalId), `terminal ${term.terminalId} was created by the client`);

    // permissions: before the edit and before the command, never for the read
    const perms = h.requestsOf("session/request_permission");
    assert.deepEqual(perms.map((p) => p.params.toolCall.toolCallId), [edit.toolCallId, exec.toolCallId]);
    for (const p of perms) {
      assert.equal(p.params.sessionId, sessionId);
      const kinds = p.params.options.map((o) => o.kind);
      for (const k of ["allow_once", "allow_always", "reject_once"]) assert.ok(kinds.includes(k), `option ${k} offered: ${kinds}`);
    }
    const order = h.clientRequests.map((r) => r.method);
    assert.ok(order.indexOf("session/request_permission") < order.indexOf("fs/write_text_file"), order.join(","));
    assert.ok(order.lastIndexOf("session/request_permission") < order.indexOf("terminal/create"), order.join(","));

    // client requests reached us with absolute paths
    const reads = h.requestsOf("fs/read_text_file");
    assert.ok(reads.some((r) => r.params.path === file));
    const writes = h.requestsOf("fs/write_text_file");
    assert.equal(writes.length, 1);
    assert.equal(writes[0].params.path, file);
    assert.equal(writes[0].params.content, "new line\n");
    assert.equal(h.requestsOf("terminal/create").length, 1);
    const t = h.terminals.get(term.terminalId);
    assert.equal(t.output, "new line\n");
    assert.ok(t.released, "terminal released at the end of the tool call");

    // the model saw every result
    assert.equal(fake.requests.length, 4);
    assert.match(assertToolResult(fake.requests[1], provider, "call_read"), /old line/);
    assertToolResult(fake.requests[2], provider, "call_patch");
    assert.match(assertToolResult(fake.requests[3], provider, "call_bash"), /new line/);
    h.assertSchemaClean();
  });
}

scenario("tool turn without client fs/terminal capabilities: local disk and local bash", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: toolTurnScript(),
    files: { "hello.txt": "old line\n" },
    agentOpts: { clientCapabilities: {} },
  });
  const file = path.join(ws, "hello.txt");
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "Fix hello.txt")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "new line\n");
  const forbidden = h.clientRequests.filter((r) => r.method.startsWith("fs/") || r.method.startsWith("terminal/"));
  assert.deepEqual(forbidden.map((r) => r.method), [], "no fs/terminal requests without the capabilities");
  const kinds = toolCallOfKind(h, sessionId, "edit");
  assert.equal(kinds.length, 1);
  assert.ok(kinds[0].content.some((c) => c.type === "diff" && c.path === file && c.newText === "new line\n"));
  assert.equal(fake.requests.length, 4);
  assert.match(assertToolResult(fake.requests[1], "openai", "call_read"), /old line/);
  assert.match(assertToolResult(fake.requests[3], "openai", "call_bash"), /new line/);
  h.assertSchemaClean();
});

scenario("permission rejected: file unchanged, tool call failed, model told, end_turn", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
      { text: "Understood, I will not edit it." },
    ],
    files: { "hello.txt": "old line\n" },
    agentOpts: { permission: "reject_once" },
  });
  const file = path.join(ws, "hello.txt");
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "Fix hello.txt")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "old line\n");
  assert.equal(h.requestsOf("session/request_permission").length, 1);
  assert.equal(h.requestsOf("fs/write_text_file").length, 0);
  const [edit] = toolCallOfKind(h, sessionId, "edit");
  assert.ok(edit, "an edit tool call was reported");
  assert.equal(edit.statuses.at(-1), "failed");
  assert.equal(fake.requests.length, 2);
  assert.match(assertToolResult(fake.requests[1], "openai", "call_patch"), /reject/i);
  h.assertSchemaClean();
});

scenario("allow_always: a second edit in the same session asks nothing", async (ctx) => {
  const { ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_p1", name: "apply_patch", arguments: { patch: patchFor("hello.txt", "old line", "middle line") } }] },
      { text: "First edit done." },
      { toolCalls: [{ id: "call_p2", name: "apply_patch", arguments: { patch: patchFor("hello.txt", "middle line", "new line") } }] },
      { text: "Second edit done." },
    ],
    files: { "hello.txt": "old line\n" },
    agentOpts: { permission: "allow_always" },
  });
  const file = path.join(ws, "hello.txt");
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "first edit")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "middle line\n");
  assert.equal((await h.prompt(sessionId, "second edit")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "new line\n");
  assert.equal(h.requestsOf("session/request_permission").length, 1);
  h.assertSchemaClean();
});

scenario("reject_always: the next call of that tool in the session is refused without asking, and the model is told", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_b1", name: "bash", arguments: { command: "touch first-ran" } }] },
      { text: "I will not run it." },
      { toolCalls: [{ id: "call_b2", name: "bash", arguments: { command: "touch second-ran" } }] },
      { text: "Still not allowed." },
    ],
    agentOpts: { permission: "reject_always" },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "run the first command")).stopReason, "end_turn");
  const asked = h.requestsOf("session/request_permission");
  assert.equal(asked.length, 1, "set-up: the first call asks");
  assert.ok(asked[0].params.options.some((o) => o.kind === "reject_always"), "set-up: a reject_always option is offered");
  assert.match(toolResultText(fake.requests[1], "call_b1"), /reject/i, "set-up: the first call is refused");

  assert.equal((await h.prompt(sessionId, "run the second command")).stopReason, "end_turn");
  const promise = "after 'Always reject bash', the next bash call in the session is refused without asking";
  assert.equal(h.requestsOf("session/request_permission").length, 1, `${promise}: the editor is not asked again`);
  assert.deepEqual(h.requestsOf("terminal/create").map((r) => r.params.command), [], `${promise}: nothing ran`);
  assert.ok(!fs.existsSync(path.join(ws, "second-ran")) && !fs.existsSync(path.join(ws, "first-ran")), `${promise}: nothing ran`);
  assert.equal(fake.requests.length, 4);
  const told = toolResultText(fake.requests[3], "call_b2");
  assert.match(told, /reject|refus/i, `${promise}: the model is told it was refused; it was told: ${told}`);
  assert.equal(toolCallStatuses(h, sessionId, "call_b2").at(-1), "failed", `${promise}: the editor sees the call fail`);
  h.assertSchemaClean();
});

scenario("permission answered `cancelled` by the editor: the model is told the call was cancelled, not rejected", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
      { text: "The edit was cancelled." },
    ],
    files: { "hello.txt": "old line\n" },
    agentOpts: { permission: "cancelled" },
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "Fix hello.txt");
  assert.equal(h.requestsOf("session/request_permission").length, 1, "set-up: the edit asked");
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "old line\n", "nothing was edited");
  assert.equal(h.requestsOf("fs/write_text_file").length, 0, "nothing was written");
  const promise = "a permission prompt the editor cancelled is reported to the model as cancelled, not as the user's rejection";
  assert.ok(fake.requests.length >= 2, `${promise}: the model hears about the call (${fake.requests.length} request(s))`);
  const told = toolResultText(fake.requests[1], "call_patch");
  assert.match(told, /cancel/i, `${promise}; the model was told: ${told}`);
  assert.doesNotMatch(told, /reject/i, `${promise}; the model was told: ${told}`);
  assert.equal(toolCallStatuses(h, sessionId, "call_patch").at(-1), "failed", "the editor sees the call end (failed), not left pending");
  assert.doesNotMatch(toolCallText(h, sessionId, "call_patch"), /reject/i, "the editor is not told the user rejected it");
  h.assertSchemaClean();
});

scenario("modes: advertised, accept_edits, full_auto, read_only, unknown mode", async (ctx) => {
  const { ws, h } = await ctx.setup({ files: { "hello.txt": "old line\n" } });
  const file = path.join(ws, "hello.txt");
  const fake = ctx.fakes[0];
  const created = await h.newSession(ws);
  const sessionId = created.sessionId;
  assert.ok(created.modes, "session/new returns modes");
  assert.deepEqual(created.modes.availableModes.map((m) => m.id), ["default", "accept_edits", "read_only", "full_auto"]);
  assert.equal(created.modes.currentModeId, "default");

  // accept_edits: edit without asking, bash still asks
  await h.setMode(sessionId, "accept_edits");
  const modeUpdate = await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "current_mode_update", { timeout: 3000 });
  assert.equal(modeUpdate.update.currentModeId, "accept_edits");
  fake.push([
    { toolCalls: [{ id: "call_e1", name: "apply_patch", arguments: { patch: patchFor("hello.txt", "old line", "line two") } }] },
    { toolCalls: [{ id: "call_b1", name: "bash", arguments: { command: "cat hello.txt" } }] },
    { text: "ok" },
  ]);
  assert.equal((await h.prompt(sessionId, "edit in accept_edits")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "line two\n");
  let perms = h.requestsOf("session/request_permission");
  assert.equal(perms.length, 1, "only the command asked");
  assert.equal(perms[0].params.toolCall.toolCallId, toolCallOfKind(h, sessionId, "execute")[0].toolCallId);

  // full_auto: nothing asks
  await h.setMode(sessionId, "full_auto");
  fake.push([
    { toolCalls: [{ id: "call_e2", name: "apply_patch", arguments: { patch: patchFor("hello.txt", "line two", "line three") } }] },
    { toolCalls: [{ id: "call_b2", name: "bash", arguments: { command: "cat hello.txt" } }] },
    { text: "ok" },
  ]);
  assert.equal((await h.prompt(sessionId, "edit in full_auto")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "line three\n");
  assert.equal(h.requestsOf("session/request_permission").length, 1, "full_auto asks nothing");

  // read_only: the edit is refused without asking
  await h.setMode(sessionId, "read_only");
  const before = toolCallsById(h, sessionId).size;
  fake.push([
    { toolCalls: [{ id: "call_e3", name: "apply_patch", arguments: { patch: patchFor("hello.txt", "line three", "line four") } }] },
    { text: "cannot edit" },
  ]);
  assert.equal((await h.prompt(sessionId, "edit in read_only")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(file, "utf8"), "line three\n");
  assert.equal(h.requestsOf("session/request_permission").length, 1, "read_only asks nothing");
  const newCalls = [...toolCallsById(h, sessionId).values()].slice(before).map(merged);
  assert.equal(newCalls.length, 1);
  assert.equal(newCalls[0].kind, "edit");
  assert.equal(newCalls[0].statuses.at(-1), "failed");
  const modeUpdates = h.updatesOf(sessionId, "current_mode_update").map((u) => u.currentModeId);
  assert.deepEqual(modeUpdates, ["accept_edits", "full_auto", "read_only"]);

  // unknown mode
  const err = await expectRpcError(h.setMode(sessionId, "yolo"));
  assert.equal(err.code, -32602);
  h.assertSchemaClean();
});
