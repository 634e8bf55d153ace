// Containment on every executor (DESIGN §11, issue 40 R3): on ssh a path is judged after
// resolving it there (`realpath -m`), so a repository's relative symlink `sub -> ../outside`
// asks, and the remote user's own config folder is guarded; a virtual executor's files are local
// ones, judged as such (the config root, credentials.yaml and mcp_tokens.json guarded).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResultText, writeFiles } from "./harness.mjs";
import { sshdForThisFile } from "./sshd.mjs";

const { sshd, sshScenario } = sshdForThisFile();

const call = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }] });
const read = (id, p) => call(id, "read_file", { path: p });
const edit = (id, patch) => call(id, "apply_patch", { patch });
const addFile = (file, line) => `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch`;
const patchFor = (file, from, to) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch`;

async function start(ctx, { executors, script, permission = "reject_once" }) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace({ "where.txt": "local\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  for (const [id, yaml] of Object.entries(executors(home))) writeFiles(home.configDir, { [`executors/${id}.yaml`]: yaml });
  const h = await ctx.agent({ env: home.env, cwd: ws, permission });
  await h.initialize();
  return { fake, ws, home, h };
}

const asked = (h) => h.requestsOf("session/request_permission").map((r) => r.params.toolCall.toolCallId);
const modelGot = (fake) => JSON.stringify(fake.requests.map((r) => r.body));

sshScenario("ssh: a relative symlink `sub -> ../outside` in the remote workdir asks for reads (Ask) and edits (Accept edits)", async (ctx) => {
  const secret = `REMOTE-SECRET-${process.pid}`;
  const outside = `${sshd.workdir}-outside`;
  fs.mkdirSync(outside, { recursive: true });
  ctx.defer(() => fs.rmSync(outside, { recursive: true, force: true }));
  fs.writeFileSync(path.join(outside, "secret.txt"), `${secret}\n`);
  fs.writeFileSync(path.join(outside, "victim.txt"), "old line\n");
  for (const f of [outside, path.join(outside, "secret.txt"), path.join(outside, "victim.txt")]) fs.chownSync(f, sshd.uid, sshd.gid);
  sshd.writeRemote("in.txt", "inside remote\n");
  const link = path.join(sshd.workdir, "sub");
  fs.symlinkSync(`../${path.basename(outside)}`, link);
  fs.lchownSync(link, sshd.uid, sshd.gid);
  const credentials = path.join(sshd.remoteHome, ".config/openvaala/credentials.yaml");

  const { fake, ws, h } = await start(ctx, {
    executors: () => ({ box: sshd.executorYaml("box") }),
    script: [
      read("c_in", "in.txt"),
      read("c_secret", "sub/secret.txt"),
      { text: "asked" },
      edit("c_victim", patchFor("sub/victim.txt", "old line", "owned")),
      read("c_creds", credentials),
      { text: "done" },
    ],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "read")).stopReason, "end_turn");
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");

  const promise = "on ssh a path is judged where it really lies there";
  assert.deepEqual(asked(h), ["c_secret", "c_victim"], `${promise}: the read and the edit through the symlink ask, the read inside does not`);
  assert.match(toolResultText(fake.requests[1], "c_in"), /inside remote/);
  assert.doesNotMatch(modelGot(fake), new RegExp(secret), `${promise}: the rejected read never reaches the model`);
  assert.equal(fs.readFileSync(path.join(outside, "victim.txt"), "utf8"), "old line\n", `${promise}: the rejected edit changed nothing outside`);
  assert.match(toolResultText(fake.requests[5], "c_creds"), /Refused: no tool may read/, `${promise}: the remote user's credentials.yaml is refused`);
  h.assertSchemaClean();
});

scenario("virtual: an executor rooted at a folder holding the config root guards credentials, MCP tokens and hooks", async (ctx) => {
  const key = `sk-VIRTUAL-${process.pid}`;
  const token = `mcp-VIRTUAL-${process.pid}`;
  const { fake, ws, home, h } = await start(ctx, {
    executors: (home) => ({ notes: `type: virtual\nroot: ${home.root}\nread_only: false\n` }),
    script: [
      read("c_creds", "/config/credentials.yaml"),
      read("c_tokens", "/config/mcp_tokens.json"),
      edit("c_hook", addFile("/config/hooks/evil.yaml", "PreToolUse: []")),
      edit("c_plain", addFile("/plain.txt", "fine")),
      { text: "done" },
    ],
  });
  fs.writeFileSync(path.join(home.configDir, "credentials.yaml"), `providers:\n  openai:\n    api_key: ${key}\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(home.configDir, "mcp_tokens.json"), JSON.stringify({ servers: { s: { url: "https://x", access_token: token } } }), { mode: 0o600 });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "notes" } } });
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");

  const promise = "a virtual executor's files are judged as the local files they are";
  assert.doesNotMatch(modelGot(fake), new RegExp(`${key}|${token}`), `${promise}: no key or token reaches the model`);
  for (const [i, id] of [[1, "c_creds"], [2, "c_tokens"]])
    assert.match(toolResultText(fake.requests[i], id), /Refused: no tool may read/, `${promise}: ${id} is refused`);
  assert.deepEqual(asked(h), ["c_hook"], `${promise}: an edit in the config root asks in Accept edits, one inside does not`);
  assert.ok(!fs.existsSync(path.join(home.configDir, "hooks/evil.yaml")), `${promise}: the rejected hook was not written`);
  assert.ok(fs.existsSync(path.join(home.root, "plain.txt")), "set-up: the edit inside ran");
  h.assertSchemaClean();
});
