// What a session may touch without asking (DESIGN §11): edits outside the session's folder (by
// `..` or through a symlinked folder) and in the config root ask even in Accept edits; reads
// outside it ask in Ask and Accept edits, but a skill's folder stays readable; no tool reads or
// writes the credentials file, in any mode, and its content never reaches the model.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResultText } from "./harness.mjs";

const addFile = (file, line) => `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch`;
const patchFor = (file, from, to) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch`;
const read = (id, p) => ({ toolCalls: [{ id, name: "read_file", arguments: { path: p } }] });
const edit = (id, patch) => ({ toolCalls: [{ id, name: "apply_patch", arguments: { patch } }] });

/**
 * Fake model, workspace, config home (with `configFiles` written before the agent starts) and an
 * initialized agent. `script` may be a function of { ws, home } (for steps naming their paths).
 */
async function start(ctx, { script, files = {}, configFiles = {}, permission = "reject_once" }) {
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace(files);
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  for (const [rel, content] of Object.entries(configFiles)) {
    const p = path.join(home.configDir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content, { mode: 0o600 });
  }
  fake.push(typeof script === "function" ? script({ ws, home }) : script);
  const h = await ctx.agent({ env: home.env, cwd: ws, permission });
  await h.initialize();
  return { fake, ws, home, h };
}

const titles = (h) => h.requestsOf("session/request_permission").map((r) => r.params.toolCall.title ?? "");
const everythingTheModelGot = (fake) => JSON.stringify(fake.requests.map((r) => r.body));

scenario("Accept edits: an edit inside asks nothing; `*** Add File: ../../outside.txt` asks, and rejected writes nothing outside", async (ctx) => {
  const { fake, ws, h } = await start(ctx, {
    files: { "a/b/hello.txt": "old line\n" },
    script: [edit("call_in", patchFor("hello.txt", "old line", "new line")), edit("call_out", addFile("../../outside.txt", "escaped")), { text: "done" }],
  });
  const { sessionId } = await h.newSession(path.join(ws, "a/b"));
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");

  assert.equal(fs.readFileSync(path.join(ws, "a/b/hello.txt"), "utf8"), "new line\n", "set-up: the edit inside ran");
  const promise = "in Accept edits an edit that `..` leads outside the session's folder asks first";
  const asked = h.requestsOf("session/request_permission");
  assert.equal(asked.length, 1, `${promise}: exactly one prompt (for the edit outside, none for the edit inside); titles ${JSON.stringify(titles(h))}`);
  assert.equal(asked[0].params.toolCall.toolCallId, "call_out", `${promise}: the prompt is for the edit outside`);
  assert.match(titles(h)[0], /outside/i, `${promise}: the prompt says why it asks`);
  assert.ok(!fs.existsSync(path.join(ws, "outside.txt")), `${promise}: rejected, no file exists outside`);
  assert.match(toolResultText(fake.requests[2], "call_out"), /reject/i, `${promise}: the model is told it was rejected`);
  h.assertSchemaClean();
});

scenario("Accept edits: an update through a symlinked folder that leads outside asks", async (ctx) => {
  const { fake, ws, h } = await start(ctx, {
    files: { "proj/hello.txt": "hi\n", "elsewhere/notes.txt": "old line\n" },
    script: [edit("call_link", patchFor("link/notes.txt", "old line", "new line")), { text: "done" }],
  });
  fs.symlinkSync("../elsewhere", path.join(ws, "proj/link"));
  const { sessionId } = await h.newSession(path.join(ws, "proj"));
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");

  const promise = "in Accept edits an edit through a symlinked folder that resolves outside the session's folder asks first";
  assert.equal(h.requestsOf("session/request_permission").length, 1, `${promise}: one prompt`);
  assert.match(titles(h)[0], /outside/i, `${promise}: the prompt says why it asks`);
  assert.equal(fs.readFileSync(path.join(ws, "elsewhere/notes.txt"), "utf8"), "old line\n", `${promise}: rejected, the file outside is unchanged`);
  assert.equal(h.requestsOf("fs/write_text_file").length, 0, `${promise}: nothing was written`);
  assert.deepEqual(h.requestsOf("fs/read_text_file").map((r) => r.params.path), [],
    `${promise}: it asks before the editor reads the file outside (to build the diff)`);
  assert.match(toolResultText(fake.requests[1], "call_link"), /reject/i);
  h.assertSchemaClean();
});

scenario("reads outside the session's folder ask in Ask and Accept edits; a skill's SKILL.md outside it does not", async (ctx) => {
  const secret = `OUTSIDE-SECRET-${process.pid}`;
  const { fake, ws, h } = await start(ctx, {
    files: { "proj/in.txt": "inside text\n", "private/secret.txt": `${secret}\n` },
    configFiles: { "skills/helper/SKILL.md": "---\nname: helper\ndescription: Helps.\n---\n# helper\nSKILL-BODY-MARKER\n" },
    script: ({ home }) => [
      read("call_skill", path.join(home.configDir, "skills/helper/SKILL.md")),
      read("call_in", "in.txt"),
      read("call_out_ask", "../private/secret.txt"),
      { text: "asked" },
      read("call_out_accept", "../private/secret.txt"),
      { text: "asked again" },
    ],
  });
  const { sessionId } = await h.newSession(path.join(ws, "proj"));
  assert.equal((await h.prompt(sessionId, "read in Ask")).stopReason, "end_turn");

  const promise = "a read outside the session's folder asks in Ask";
  let asked = h.requestsOf("session/request_permission");
  assert.deepEqual(asked.map((r) => r.params.toolCall.toolCallId), ["call_out_ask"],
    `${promise}, and only that read (the skill's SKILL.md and the file inside need no answer)`);
  assert.match(titles(h)[0], /outside/i, `${promise}: the prompt says why it asks`);
  assert.match(toolResultText(fake.requests[1], "call_skill"), /SKILL-BODY-MARKER/, "a skill outside the workspace is read without asking");
  assert.match(toolResultText(fake.requests[2], "call_in"), /inside text/);

  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "read in Accept edits")).stopReason, "end_turn");
  asked = h.requestsOf("session/request_permission");
  assert.deepEqual(asked.map((r) => r.params.toolCall.toolCallId), ["call_out_ask", "call_out_accept"], "a read outside the session's folder asks in Accept edits too");
  assert.doesNotMatch(everythingTheModelGot(fake), new RegExp(secret), "a rejected read outside never reaches the model");
  assert.match(toolResultText(fake.requests[5], "call_out_accept"), /did not allow|reject/i, "the model is told the read was not allowed");
  h.assertSchemaClean();
});

scenario("no tool reads or writes the credentials file, not even in Full auto or through a symlink", async (ctx) => {
  const key = `sk-CREDENTIAL-${process.pid}`;
  const credentials = `providers:\n  fake:\n    api_key: ${key}\n`;
  const { fake, ws, home, h } = await start(ctx, {
    configFiles: { "credentials.yaml": credentials },
    permission: "allow_once",
    script: ({ home }) => [
      read("call_read", path.join(home.configDir, "credentials.yaml")),
      read("call_alias", "keys"),
      edit("call_edit", patchFor(path.join(home.configDir, "credentials.yaml"), "providers:", "stolen:")),
      edit("call_alias_edit", patchFor("keys", "providers:", "stolen:")),
      { text: "done" },
    ],
  });
  const file = path.join(home.configDir, "credentials.yaml");
  fs.symlinkSync(file, path.join(ws, "keys"));
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "look at the keys")).stopReason, "end_turn");

  const promise = "the credentials file is refused to every tool in every mode";
  assert.doesNotMatch(everythingTheModelGot(fake), new RegExp(key), `${promise}: the key never reaches the model`);
  assert.equal(fs.readFileSync(file, "utf8"), credentials, `${promise}: the file is unchanged`);
  assert.equal(h.requestsOf("session/request_permission").length, 0, `${promise}: refused without asking`);
  const touched = [...h.requestsOf("fs/read_text_file"), ...h.requestsOf("fs/write_text_file")].map((r) => r.params.path);
  assert.deepEqual(touched, [], `${promise}: the editor is not asked to read or write it either`);
  for (const [i, id] of ["call_read", "call_alias", "call_edit", "call_alias_edit"].entries())
    assert.match(toolResultText(fake.requests[i + 1], id), /credentials/i, `${promise}: the model is told why ${id} was refused`);
  h.assertSchemaClean();
});

scenario("Accept edits: an edit in the config root asks even when it lies inside the session's folder", async (ctx) => {
  const { fake, home, h } = await start(ctx, {
    configFiles: { "notes.txt": "old line\n" },
    script: [edit("call_plain", addFile("plain.txt", "fine")), edit("call_config", patchFor("config/notes.txt", "old line", "new line")), { text: "done" }],
  });
  // The session's folder holds the config root (home.configDir is <home.root>/config).
  const { sessionId } = await h.newSession(home.root);
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");

  assert.equal(fs.readFileSync(path.join(home.root, "plain.txt"), "utf8"), "fine\n", "set-up: an edit beside the config root runs");
  const promise = "in Accept edits an edit in the config root asks, its hooks run code";
  const asked = h.requestsOf("session/request_permission");
  assert.deepEqual(asked.map((r) => r.params.toolCall.toolCallId), ["call_config"], `${promise}: only that edit asks`);
  assert.match(titles(h)[0], /config/i, `${promise}: the prompt says why it asks`);
  assert.equal(fs.readFileSync(path.join(home.configDir, "notes.txt"), "utf8"), "old line\n", `${promise}: rejected, unchanged`);
  assert.match(toolResultText(fake.requests[2], "call_config"), /reject/i);
  h.assertSchemaClean();
});
