// Approvals per key (issue 36 item 1) through the ACP SDK client: "Always allow" is remembered for
// the command (program and subcommand), each part of a compound command apart, and an edit by its
// workspace root; the options say what is remembered.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResultText } from "./harness.mjs";

const bash = (id, command) => ({ toolCalls: [{ id, name: "bash", arguments: { command } }] });
const addFile = (file, line) => `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch`;
const edit = (id, file) => ({ toolCalls: [{ id, name: "apply_patch", arguments: { patch: addFile(file, "x") } }] });

scenario("an \"Always allow\" for `echo hello` lets echo run unasked, never `rm -rf x` nor a compound with it", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [
      bash("call_echo1", "echo hello"),
      bash("call_echo2", "echo again"),
      bash("call_rm", "rm -rf x"),
      bash("call_both", "echo hi && rm -rf x"),
      { text: "done" },
    ],
    files: { "x/keep.txt": "keep\n" },
    agentOpts: { onPermission: (params) => (params.toolCall.toolCallId === "call_echo1" ? "allow_always" : "reject_once") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  const promise = "an always-allowed command does not let another command run unasked";
  const asked = h.requestsOf("session/request_permission");
  assert.deepEqual(asked.map((r) => r.params.toolCall.toolCallId), ["call_echo1", "call_rm", "call_both"], `${promise}: who was asked`);
  const names = asked[0].params.options.map((o) => o.name);
  assert.ok(names.includes("Always allow `echo`"), `${promise}: the option names what is remembered: ${names}`);
  assert.ok(fs.existsSync(path.join(ws, "x/keep.txt")), `${promise}: rm never ran`);
  assert.match(toolResultText(fake.requests[2], "call_echo2"), /again/, `${promise}: the same program ran unasked`);
  assert.match(toolResultText(fake.requests[4], "call_both"), /reject/i, `${promise}: the compound command was refused`);
  h.assertSchemaClean();
});

scenario("an \"Always allow\" for an edit inside covers the workspace, never a file outside", async (ctx) => {
  const { ws, h } = await ctx.setup({
    script: [edit("call_in1", "a.txt"), edit("call_in2", "sub/b.txt"), edit("call_out", "../outside-keys.txt"), { text: "done" }],
    agentOpts: { onPermission: (params) => (params.toolCall.toolCallId === "call_in1" ? "allow_always" : "reject_once") },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  const asked = h.requestsOf("session/request_permission");
  assert.deepEqual(asked.map((r) => r.params.toolCall.toolCallId), ["call_in1", "call_out"], "the second edit inside is not asked");
  assert.ok(asked[0].params.options.some((o) => o.name === "Always allow edits in this workspace"), JSON.stringify(asked[0].params.options));
  assert.ok(!asked[1].params.options.some((o) => o.kind === "allow_always"), "an edit outside offers no 'always'");
  assert.ok(fs.existsSync(path.join(ws, "sub/b.txt")));
  assert.ok(!fs.existsSync(path.join(path.dirname(ws), "outside-keys.txt")), "the edit outside did not run");
  h.assertSchemaClean();
});
