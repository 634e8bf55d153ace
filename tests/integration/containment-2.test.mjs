// Paths the editor opens are the paths we judged (DESIGN §11, issue 40 R1): the editor's fs/*
// gets the path resolved in our process, and a path that names a file of whichever process opens
// it (/proc/self/cwd/…, /dev/fd/…) is refused, since the editor (another process, with another
// working directory) would open another file than the one checked.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, toolResultText } from "./harness.mjs";

const read = (id, p) => ({ toolCalls: [{ id, name: "read_file", arguments: { path: p } }] });
const edit = (id, patch) => ({ toolCalls: [{ id, name: "apply_patch", arguments: { patch } }] });
const addFile = (file, line) => `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch`;

/** An editor whose own working directory is `editorCwd`: it opens `/proc/self/cwd/…` there, as a real one would. */
function editorIn(editorCwd) {
  const there = (p) => (p.startsWith("/proc/self/cwd/") ? path.join(editorCwd, p.slice("/proc/self/cwd/".length)) : p);
  return {
    onFsRead: async (params) => ({ content: fs.readFileSync(there(params.path), "utf8") }),
    onFsWrite: async (params) => {
      fs.mkdirSync(path.dirname(there(params.path)), { recursive: true });
      fs.writeFileSync(there(params.path), params.content);
      return {};
    },
  };
}

scenario("the editor's fs/* gets resolved paths, and /proc/self/cwd/… is refused when the editor opens files", async (ctx) => {
  const secret = `PRIVATE-KEY-${process.pid}`;
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({ "proj/data/notes.txt": "notes inside\n", "editor-home/.ssh/id_rsa": `${secret}\n` });
  fs.symlinkSync("data", path.join(ws, "proj/alias"));
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  fake.push([
    read("call_proc", "/proc/self/cwd/.ssh/id_rsa"),
    read("call_alias", "alias/notes.txt"),
    edit("call_proc_write", addFile("/proc/self/cwd/.bashrc-owned", "owned")),
    edit("call_alias_write", addFile("alias/new.txt", "fine")),
    { text: "done" },
  ]);
  const h = await ctx.agent({ env: home.env, cwd: path.join(ws, "proj"), permission: "allow_once", ...editorIn(path.join(ws, "editor-home")) });
  await h.initialize();
  const { sessionId } = await h.newSession(path.join(ws, "proj"));
  await h.setMode(sessionId, "accept_edits");
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");

  const promise = "a path the editor opens is the path containment judged";
  const sent = (m) => h.requestsOf(m).map((r) => r.params.path);
  const real = fs.realpathSync(path.join(ws, "proj/data"));
  assert.deepEqual(sent("fs/read_text_file"), [path.join(real, "notes.txt")], `${promise}: the editor reads the resolved path, never /proc/self/…`);
  assert.deepEqual(sent("fs/write_text_file"), [path.join(real, "new.txt")], `${promise}: the editor writes the resolved path, never /proc/self/…`);
  assert.doesNotMatch(JSON.stringify(fake.requests.map((r) => r.body)), new RegExp(secret), `${promise}: no byte of the editor's private key reaches the model`);
  assert.ok(!fs.existsSync(path.join(ws, "editor-home/.bashrc-owned")), `${promise}: nothing lands in the editor's folder`);
  for (const [i, id] of [[1, "call_proc"], [3, "call_proc_write"]])
    assert.match(toolResultText(fake.requests[i], id), /Refused: .*\/proc/, `${promise}: the model is told why ${id} was refused`);
  assert.match(toolResultText(fake.requests[2], "call_alias"), /notes inside/);
  h.assertSchemaClean();
});

scenario("\"Always allow\" on an edit inside does not cover the config root or a file outside (Ask)", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  const hook = path.join(home.configDir, "hooks/x.yaml");
  const outside = path.join(path.dirname(home.root), `outside-${process.pid}.txt`);
  ctx.defer(() => fs.rmSync(outside, { force: true }));
  fake.push([
    edit("call_inside", addFile("notes.txt", "fine")),
    edit("call_hook", addFile(hook, "PreToolUse: []")),
    edit("call_outside", addFile(`../${path.basename(outside)}`, "escaped")),
    { text: "done" },
  ]);
  // The session's folder holds the config root (home.configDir is <home.root>/config).
  const onPermission = (params) => (params.toolCall.toolCallId === "call_inside" ? "allow_always" : "reject_once");
  const h = await ctx.agent({ env: home.env, cwd: home.root, onPermission });
  await h.initialize();
  const { sessionId } = await h.newSession(home.root);
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");

  const promise = "an \"always allow\" answer covers edits inside the session's folders only";
  const asked = h.requestsOf("session/request_permission").map((r) => r.params.toolCall.toolCallId);
  assert.deepEqual(asked, ["call_inside", "call_hook", "call_outside"], `${promise}: the config root and the outside still ask`);
  assert.ok(fs.existsSync(path.join(home.root, "notes.txt")), "set-up: the edit inside ran");
  assert.ok(!fs.existsSync(hook), `${promise}: no hook was written unasked`);
  assert.ok(!fs.existsSync(outside), `${promise}: nothing was written outside unasked`);
  h.assertSchemaClean();
});

scenario("an AGENTS.md file is readable without asking, its folder is not (a home that is a git repository)", async (ctx) => {
  const secret = `HOME-SECRET-${process.pid}`;
  const fake = await ctx.fakeModel([]);
  // A dotfiles repository in "home", with an AGENTS.md at its top; the session's folder below it has no .git.
  const ws = ctx.workspace({
    ".git/HEAD": "ref: refs/heads/main\n",
    "AGENTS.md": "# home rules\nHOME-AGENTS-MARKER\n",
    ".ssh/id_rsa": `${secret}\n`,
    "scratch/proj/a.txt": "a\n",
  });
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  fake.push([read("call_agents", "../../AGENTS.md"), read("call_key", "../../.ssh/id_rsa"), { text: "done" }]);
  const h = await ctx.agent({ env: home.env, cwd: ws, permission: "reject_once" });
  await h.initialize();
  const { sessionId } = await h.newSession(path.join(ws, "scratch/proj"));
  assert.equal((await h.prompt(sessionId, "read")).stopReason, "end_turn");

  const promise = "the folder that holds an AGENTS.md file is not a root";
  const asked = h.requestsOf("session/request_permission").map((r) => r.params.toolCall.toolCallId);
  assert.deepEqual(asked, ["call_key"], `${promise}: reading ~/.ssh/id_rsa asks, reading the AGENTS.md file itself does not`);
  assert.match(toolResultText(fake.requests[1], "call_agents"), /HOME-AGENTS-MARKER/);
  assert.doesNotMatch(JSON.stringify(fake.requests.map((r) => r.body)), new RegExp(secret), `${promise}: the rejected key never reaches the model`);
  h.assertSchemaClean();
});

scenario("no tool reads mcp_tokens.json or a process's environ, even in Full auto, through a hard link, or without the editor", async (ctx) => {
  const token = `mcp-token-${process.pid}`;
  const marker = `ENV-MARKER-${process.pid}`;
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({ "a.txt": "a\n" });
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  const tokens = path.join(home.configDir, "mcp_tokens.json");
  fs.writeFileSync(tokens, JSON.stringify({ servers: { s: { url: "https://x", access_token: token } } }), { mode: 0o600 });
  fs.linkSync(tokens, path.join(ws, "tokens-link.json"));
  fake.push([
    read("call_tokens", tokens),
    read("call_link", "tokens-link.json"),
    read("call_environ", "/proc/self/environ"),
    read("call_thread", "/proc/thread-self/environ"),
    { text: "done" },
  ]);
  const h = await ctx.agent({
    env: { ...home.env, OV_TEST_MARKER: marker },
    cwd: ws,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
  });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "read")).stopReason, "end_turn");

  const promise = "the MCP token file and a process's environment are refused to every tool";
  const got = JSON.stringify(fake.requests.map((r) => r.body));
  assert.doesNotMatch(got, new RegExp(token), `${promise}: no OAuth token reaches the model`);
  assert.doesNotMatch(got, new RegExp(marker), `${promise}: no environment variable reaches the model`);
  assert.equal(h.requestsOf("session/request_permission").length, 0, `${promise}: refused without asking`);
  for (const [i, id] of ["call_tokens", "call_link", "call_environ", "call_thread"].entries())
    assert.match(toolResultText(fake.requests[i + 1], id), /Refused: no tool may read/, `${promise}: the model is told why ${id} was refused`);
  h.assertSchemaClean();
});
