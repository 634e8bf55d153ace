// Remembered answers (issue 36 item 1) through the ACP SDK client: they survive session/load and
// session/resume on a new agent, `/permissions` lists them and `/permissions clear` forgets them
// (also for good), and a read outside is remembered by its folder only.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scenario, toolResultText } from "./harness.mjs";

const bash = (id, command) => ({ toolCalls: [{ id, name: "bash", arguments: { command } }] });
const read = (id, p) => ({ toolCalls: [{ id, name: "read_file", arguments: { path: p } }] });
const askedIds = (h) => h.requestsOf("session/request_permission").map((r) => r.params.toolCall.toolCallId);
const alwaysFor = (id) => (params) => (params.toolCall.toolCallId === id ? "allow_always" : "reject_once");

scenario("an \"Always allow\" survives session/load and session/resume on a new agent, for that command only", async (ctx) => {
  const { fake, ws, home, h } = await ctx.setup({
    script: [
      bash("call_echo1", "echo hello"), { text: "one" },
      bash("call_echo2", "echo again"), bash("call_rm", "rm -rf x"), { text: "two" },
      bash("call_echo3", "echo thrice"), { text: "three" },
    ],
    files: { "x/keep.txt": "keep\n" },
    agentOpts: { onPermission: alwaysFor("call_echo1") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  await h.close();

  const promise = "a remembered answer survives session/load";
  const h2 = await ctx.agent({ env: home.env, cwd: ws, onPermission: () => "reject_once" });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal((await h2.prompt(sessionId, "again")).stopReason, "end_turn");
  assert.deepEqual(askedIds(h2), ["call_rm"], `${promise}: only the command never allowed is asked`);
  assert.match(toolResultText(fake.requests[3], "call_echo2"), /again/, `${promise}: echo ran unasked`);
  assert.ok(fs.existsSync(path.join(ws, "x/keep.txt")), `${promise}: rm never ran`);
  await h2.close();

  const h3 = await ctx.agent({ env: home.env, cwd: ws, onPermission: () => "reject_once" });
  await h3.initialize();
  await h3.request("session/resume", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal((await h3.prompt(sessionId, "thrice")).stopReason, "end_turn");
  assert.deepEqual(askedIds(h3), [], "a remembered answer survives session/resume: echo is not asked");
  assert.match(toolResultText(fake.requests[6], "call_echo3"), /thrice/);
  h3.assertSchemaClean();
});

scenario("/permissions lists the remembered answers; /permissions clear forgets them, also after a load", async (ctx) => {
  const { fake, ws, home, h } = await ctx.setup({
    script: [bash("call_echo1", "echo hello"), { text: "one" }, bash("call_echo2", "echo again"), { text: "two" }],
    agentOpts: { onPermission: alwaysFor("call_echo1") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  const commands = h.updatesOf(sessionId, "available_commands_update").at(-1).availableCommands.map((c) => c.name);
  assert.ok(commands.includes("permissions"), `/permissions is offered as a slash command: ${commands}`);

  assert.equal((await h.prompt(sessionId, "/permissions")).stopReason, "end_turn");
  assert.match(h.textOf(sessionId), /Always allowed:\s*\n(> )?- `echo` \(commands\)/, `/permissions lists what was allowed for good: ${JSON.stringify(h.textOf(sessionId))}`);
  assert.equal((await h.prompt(sessionId, "/permissions clear")).stopReason, "end_turn");
  assert.match(h.textOf(sessionId), /1 answer forgotten/, "/permissions clear says what it forgot");
  assert.equal(fake.requests.length, 2, "neither /permissions nor /permissions clear calls the model");
  assert.equal((await h.prompt(sessionId, "again")).stopReason, "end_turn");
  assert.deepEqual(askedIds(h), ["call_echo1", "call_echo2"], "after /permissions clear the command is asked again");
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal((await h2.prompt(sessionId, "/permissions")).stopReason, "end_turn");
  assert.match(h2.textOf(sessionId), /No answer is remembered/, "a clear is journaled: the load remembers nothing");
  h2.assertSchemaClean();
});

scenario("an \"Always allow\" for a read outside covers that folder, never another one", async (ctx) => {
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ov-reads-")));
  ctx.defer(() => fs.rmSync(outside, { recursive: true, force: true }));
  for (const [rel, text] of [["a/one.txt", "ONE"], ["a/two.txt", "TWO"], ["b/three.txt", "THREE"]]) {
    fs.mkdirSync(path.dirname(path.join(outside, rel)), { recursive: true });
    fs.writeFileSync(path.join(outside, rel), text);
  }
  const { fake, ws, h } = await ctx.setup({
    script: [
      read("call_one", path.join(outside, "a/one.txt")),
      read("call_two", path.join(outside, "a/two.txt")),
      read("call_three", path.join(outside, "b/three.txt")),
      { text: "done" },
    ],
    agentOpts: { onPermission: alwaysFor("call_one") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "read them")).stopReason, "end_turn");
  const promise = "a read outside is remembered by its folder";
  assert.deepEqual(askedIds(h), ["call_one", "call_three"], `${promise}: the second read in the same folder is not asked`);
  const names = h.requestsOf("session/request_permission")[0].params.options.map((o) => o.name);
  assert.ok(names.includes(`Always allow reads in ${path.join(outside, "a")}`), `${promise}: the option names the folder: ${names}`);
  assert.match(toolResultText(fake.requests[2], "call_two"), /TWO/, `${promise}: the read in the allowed folder ran`);
  assert.doesNotMatch(toolResultText(fake.requests[3], "call_three"), /THREE/, `${promise}: another folder is asked and refused`);
  h.assertSchemaClean();
});

scenario("a sub-agent inherits the session's remembered answers, and one it gives is remembered by the session after a load", async (ctx) => {
  const spawn = (id) => ({ toolCalls: [{ id, name: "spawn_agent", arguments: { prompt: "Run the commands" } }] });
  const { fake, ws, home, h } = await ctx.setup({
    script: [
      bash("call_echo1", "echo hello"), { text: "one" },
      spawn("call_sub"), bash("call_echo_child", "echo from the child"), bash("call_ls_child", "ls"), { text: "child done" }, { text: "two" },
      bash("call_ls_parent", "ls -a"), { text: "three" },
    ],
    agentOpts: { onPermission: (params) => (["call_echo1", "call_ls_child"].includes(params.toolCall.toolCallId) ? "allow_always" : "reject_once") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  assert.equal((await h.prompt(sessionId, "delegate")).stopReason, "end_turn");
  assert.ok(!askedIds(h).includes("call_echo_child"), `a sub-agent is not asked what the session always allowed: asked ${askedIds(h)}`);
  assert.ok(askedIds(h).includes("call_ls_child"), "the sub-agent asks for a command never allowed");
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws, onPermission: () => "reject_once" });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal((await h2.prompt(sessionId, "list")).stopReason, "end_turn");
  assert.deepEqual(askedIds(h2), [], "an answer given inside the sub-agent is the session's, and survives a load");
  assert.ok(fake.requests.length >= 9, `the turns ran: ${fake.requests.length} model requests`);
  h2.assertSchemaClean();
});
