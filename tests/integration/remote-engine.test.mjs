// The engine on a remote executor (DESIGN §10, issue 12): a session whose default executor is an
// SSH host (a real sshd on 127.0.0.1, tests/integration/sshd.mjs) reads its skills and AGENTS.md
// there; AGENTS.md of another executor joins after the first tool use there.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, scenario, systemPrompt, toolResultText, userText, waitUntil, writeFiles } from "./harness.mjs";
import { sshdForThisFile } from "./sshd.mjs";

const { sshd, sshScenario } = sshdForThisFile();
// Run on the remote with the tests' own Node (sshd.nodeCommand), not the remote user's `node`.
const WHERE_SERVER = path.join(REPO_ROOT, "tests/fixtures/mcp/where-server.mjs");
const call = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }] });
const skillMd = (name, description) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\nSteps for ${name}.\n`;

/** Writes files in the remote user's home (owned by that user); removed when the test ends. */
function writeRemoteHome(ctx, rel, text) {
  const f = path.join(sshd.remoteHome, rel);
  const top = path.join(sshd.remoteHome, rel.split("/")[0]);
  const existed = fs.existsSync(top);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, text);
  for (let d = path.dirname(f); d.startsWith(sshd.remoteHome) && d !== sshd.remoteHome; d = path.dirname(d))
    fs.chownSync(d, sshd.uid, sshd.gid);
  fs.chownSync(f, sshd.uid, sshd.gid);
  ctx.defer(() => fs.rmSync(existed ? f : top, { recursive: true, force: true }));
  return f;
}

/** Fake model, workspace, config (executors/<id>.yaml and `configFiles`, scripts made executable), server. */
async function setUp(ctx, { script, executors = {}, extraYaml = "", files = {}, configFiles = {} }) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace(files);
  const home = ctx.configHome({ modelUrl: fake.url, extraYaml });
  // Before the server starts: it reads the configuration once, at start-up.
  for (const [id, yaml] of Object.entries(executors)) writeFiles(home.configDir, { [`executors/${id}.yaml`]: yaml });
  writeFiles(home.configDir, configFiles);
  for (const [rel, text] of Object.entries(configFiles)) if (text.startsWith("#!")) fs.chmodSync(path.join(home.configDir, rel), 0o755);
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  return { fake, ws, home, h };
}

function commandsOf(h, sessionId) {
  const updates = h.updatesOf(sessionId, "available_commands_update");
  return updates.length ? updates.at(-1).availableCommands.map((c) => c.name) : [];
}

sshScenario("a session on an ssh executor sees the remote skills and AGENTS.md; local AGENTS.md joins after a local tool", async (ctx) => {
  sshd.writeRemote(".agents/skills/remote-proj/SKILL.md", skillMd("remote-proj", "A skill in the remote working directory"));
  sshd.writeRemote("AGENTS.md", "REMOTE-AGENTS-MARK: build with make on the devbox\n");
  const tag = `rh${process.pid}`;
  writeRemoteHome(ctx, `.claude/skills/${tag}/SKILL.md`, skillMd(tag, "A skill in the remote home"));
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    files: {
      "AGENTS.md": "LOCAL-AGENTS-MARK: the laptop's rules\n",
      ".agents/skills/local-proj/SKILL.md": skillMd("local-proj", "A skill in the local working directory"),
      "notes.txt": "local notes\n",
    },
    script: [{ text: "used the skill" }, call("c_local", "read_file", { path: "notes.txt", executor: "local" }), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  await waitUntil(() => commandsOf(h, sessionId).includes("remote-proj"), { label: "the remote skill as a slash command" });
  const names = commandsOf(h, sessionId);
  assert.ok(names.includes(tag), `the skill in the remote home (~/.claude/skills) is a slash command: ${names}`);
  assert.ok(!names.includes("local-proj"), `the local working directory's skill is not offered on the ssh executor: ${names}`);
  assert.ok(names.includes("openvaala"), `the built-in skill stays: ${names}`);

  assert.equal((await h.prompt(sessionId, "/remote-proj tidy up")).stopReason, "end_turn");
  const first = fake.requests[0];
  assert.match(userText(first), /Steps for remote-proj\./, "the remote SKILL.md is attached to the message");
  const sys = systemPrompt(first);
  assert.match(sys, /REMOTE-AGENTS-MARK/, "the remote AGENTS.md reaches the model");
  assert.ok(!sys.includes("LOCAL-AGENTS-MARK"), "the local AGENTS.md is not given while no tool ran on local");
  assert.ok(sys.includes(`${sshd.workdir}/.agents/skills/remote-proj/SKILL.md`), "the skill's path is the remote one");
  assert.match(sys, /\/skills\/openvaala\/SKILL\.md, executor: openvaala/, "the built-in skill is read on the openvaala executor");

  assert.equal((await h.prompt(sessionId, "read the local notes")).stopReason, "end_turn");
  const afterLocal = toolResultText(fake.requests.at(-1), "c_local");
  assert.match(afterLocal, /local notes/);
  assert.match(afterLocal, /LOCAL-AGENTS-MARK/, "local AGENTS.md joins after the first tool use on local");
  h.assertSchemaClean();
});

/** The copies of `fileName` in the remote user's ~/.cache/openvaala/hooks/<hash>/ */
function remoteHookCopies(fileName) {
  const root = path.join(sshd.remoteHome, ".cache/openvaala/hooks");
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).map((d) => path.join(root, d, fileName)).filter((f) => fs.existsSync(f));
}

sshScenario("a hook runs on the tool's ssh executor, in its workdir; its script is copied there once, again only after a change", async (ctx) => {
  const tag = `hook-${process.pid}-${Date.now()}`;
  const scriptName = `${tag}.sh`;
  const script = `#!/bin/sh\ninput=$(cat)\n{ pwd; id -un; echo "$input"; } >> ${tag}.out\n`;
  const { fake, ws, home, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    script: [
      call("c1", "bash", { command: "echo one" }),
      { text: "first done" },
      call("c2", "bash", { command: "echo two" }),
      { text: "second done" },
      call("c3", "bash", { command: "echo three" }),
      { text: "third done" },
    ],
    configFiles: {
      "hooks/remote.yaml": `hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n          script: ${scriptName}\n`,
      [`hooks/${scriptName}`]: script,
    },
  });
  ctx.defer(() => remoteHookCopies(scriptName).forEach((f) => fs.rmSync(path.dirname(f), { recursive: true, force: true })));
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });

  assert.equal((await h.prompt(sessionId, "one")).stopReason, "end_turn");
  const out = path.join(sshd.workdir, `${tag}.out`);
  assert.ok(fs.existsSync(out), "the PreToolUse hook ran on the remote, in the executor's working directory");
  assert.ok(!fs.existsSync(path.join(ws, `${tag}.out`)), "the hook did not run locally");
  const ran = fs.readFileSync(out, "utf8");
  assert.ok(ran.startsWith(`${sshd.workdir}\novtest\n`), `the hook ran in the remote workdir as the remote user: ${ran}`);
  assert.ok(ran.includes(`"cwd":"${sshd.workdir}"`), `the hook's input names the executor's working directory: ${ran}`);
  const copies = remoteHookCopies(scriptName);
  assert.equal(copies.length, 1, `the script is copied to ~/.cache/openvaala/hooks/<hash>/${scriptName} there`);
  assert.equal(fs.readFileSync(copies[0], "utf8"), script);
  assert.equal(fs.statSync(copies[0]).mode & 0o777, 0o755, "the copy keeps the script's mode");
  const first = fs.statSync(copies[0]);

  assert.equal((await h.prompt(sessionId, "two")).stopReason, "end_turn");
  const second = fs.statSync(copies[0]);
  assert.equal(second.ino, first.ino, "an unchanged script is not copied again");
  assert.equal(second.mtimeMs, first.mtimeMs, "an unchanged script is not rewritten");

  const changed = script.replace(">>", "| tr a-z A-Z >>");
  fs.writeFileSync(path.join(home.configDir, "hooks", scriptName), changed);
  assert.equal((await h.prompt(sessionId, "three")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(copies[0], "utf8"), changed, "a changed script is copied again before it runs");
  assert.match(fs.readFileSync(out, "utf8"), /OVTEST/, "the changed script ran");
  assert.equal(fake.requests.length, 6);
  h.assertSchemaClean();
});

sshScenario("an MCP server whose executors list the session's ssh executor runs on that host; [local] stays local", async (ctx) => {
  const { command, args: [server] } = sshd.nodeCommand(WHERE_SERVER);
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    configFiles: {
      "mcp_servers/where.yaml": `id: where\ntype: stdio\ncommand: ${command}\nargs: [${server}]\nenv: {WHERE_MARK: from-config}\nexecutors: [local, box]\n`,
      "mcp_servers/here.yaml": `id: here\ntype: stdio\ncommand: ${command}\nargs: [${server}]\n`,
    },
    script: [call("c_where", "mcp__where__where", {}), call("c_here", "mcp__here__where", {}), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "where are the servers")).stopReason, "end_turn");
  const last = fake.requests.at(-1);
  assert.equal(toolResultText(last, "c_where").trim(), `ovtest ${sshd.workdir} from-config`,
    "a server listing the session's ssh executor runs there, as its user, in its working directory, with its env");
  assert.match(toolResultText(last, "c_here"), new RegExp(`^(?!ovtest)\\S+ ${ws.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} -`),
    "a server with the default executors [local] runs locally");
  h.assertSchemaClean();
});

sshScenario("a read on the ssh executor below its working directory brings the AGENTS.md files in between, once", async (ctx) => {
  const sub = `deep-${process.pid}`;
  sshd.writeRemote(`${sub}/AGENTS.md`, "DEEP-REMOTE-MARK: tests here use the remote fixture\n");
  sshd.writeRemote(`${sub}/inner/notes.txt`, "remote notes\n");
  sshd.writeRemote(`${sub}/inner/more.txt`, "more notes\n");
  ctx.defer(() => fs.rmSync(path.join(sshd.workdir, sub), { recursive: true, force: true }));
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    script: [call("c_read", "read_file", { path: `${sub}/inner/notes.txt` }), { text: "read" },
      call("c_again", "read_file", { path: `${sub}/inner/more.txt` }), { text: "again" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "read the notes")).stopReason, "end_turn");
  const afterRead = JSON.stringify(fake.requests[1].body.messages);
  assert.ok(!JSON.stringify(fake.requests[0].body).includes("DEEP-REMOTE-MARK"), "not before the read");
  assert.match(afterRead, /DEEP-REMOTE-MARK/, "promise: a deeper AGENTS.md on the remote joins the context after a read below it");
  assert.ok(afterRead.includes(`${sshd.workdir}/${sub}/AGENTS.md`), "named by its remote path");
  assert.equal((await h.prompt(sessionId, "read more")).stopReason, "end_turn");
  const second = toolResultText(fake.requests[3], "c_again");
  assert.ok(!second.includes("DEEP-REMOTE-MARK"), `given once, not again with the next read there: ${second}`);
  h.assertSchemaClean();
});

sshScenario("switching the session's executor moves its MCP servers: one listing both executors restarts on the new one", async (ctx) => {
  const { command, args: [server] } = sshd.nodeCommand(WHERE_SERVER);
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    configFiles: { "mcp_servers/where.yaml": `id: where\ntype: stdio\ncommand: ${command}\nargs: [${server}]\nexecutors: [local, box]\n` },
    script: [call("c_before", "mcp__where__where", {}), { text: "here" }, call("c_after", "mcp__where__where", {}), { text: "there" }],
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "where first")).stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[1], "c_before"), /^(?!ovtest)\S+ /, "on local first");
  await h.request("session/set_config_option", { sessionId, configId: "executor", value: "box" });
  assert.equal((await h.prompt(sessionId, "where now")).stopReason, "end_turn");
  assert.equal(toolResultText(fake.requests[3], "c_after").trim(), `ovtest ${sshd.workdir} -`,
    "promise: after the switch the server runs on the session's new executor");
  h.assertSchemaClean();
});

sshScenario("an http MCP server whose executors list the ssh executor is connected from that host (a port forwarded over its connection)", async (ctx) => {
  const peer = spawn(process.execPath, [path.join(REPO_ROOT, "tests/fixtures/mcp/peer-http-server.mjs")], { stdio: ["ignore", "pipe", "inherit"] });
  ctx.defer(() => peer.kill("SIGKILL"));
  let out = "";
  peer.stdout.on("data", (d) => (out += d));
  await waitUntil(() => out.includes("\n"), { timeout: 10000, label: "the peer fixture to listen" });
  const { url } = JSON.parse(out.split("\n")[0]);
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    configFiles: {
      "mcp_servers/far.yaml": `id: far\ntype: http\nurl: ${url}\nexecutors: [box]\n`,
      "mcp_servers/near.yaml": `id: near\ntype: http\nurl: ${url}\n`,
    },
    script: [call("c_far", "mcp__far__peer", {}), call("c_near", "mcp__near__peer", {}), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "who connects")).stopReason, "end_turn");
  const last = fake.requests.at(-1);
  assert.equal(toolResultText(last, "c_far").trim(), "sshd",
    "promise: an http server placed on an ssh executor is connected from that machine (through sshd), not from here");
  assert.equal(toolResultText(last, "c_near").trim(), "openvaala", "a server on [local] is connected directly");
  h.assertSchemaClean();
});

sshScenario("a plugin's hook on an ssh executor finds its plugin folder copied to ~/.cache/openvaala/plugins/<name>-<hash>/", async (ctx) => {
  const name = `rp${process.pid}`;
  const manifest =
    `name: ${name}\nversion: 1.0.0\nhooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n` +
    `        - type: command\n          command: 'cat "$OPENVAALA_PLUGIN_ROOT/core.md" > plugin-saw.txt; echo "$OPENVAALA_PLUGIN_ROOT" >> plugin-saw.txt'\n`;
  const { h, ws } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    configFiles: {
      [`plugins/${name}/.openvaala-plugin/plugin.yaml`]: manifest,
      [`plugins/${name}/core.md`]: "CORE-OF-THE-PLUGIN\n",
    },
    script: [call("c1", "bash", { command: "true" }), { text: "done" }],
  });
  const cache = path.join(sshd.remoteHome, ".cache/openvaala/plugins");
  ctx.defer(() => {
    if (fs.existsSync(cache))
      for (const d of fs.readdirSync(cache)) if (d.startsWith(`${name}-`)) fs.rmSync(path.join(cache, d), { recursive: true, force: true });
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "run")).stopReason, "end_turn");
  const saw = path.join(sshd.workdir, "plugin-saw.txt");
  assert.ok(fs.existsSync(saw), "the plugin's hook ran on the remote, in its working directory");
  const [core, root] = fs.readFileSync(saw, "utf8").split("\n");
  assert.equal(core, "CORE-OF-THE-PLUGIN", "the hook read a file of its plugin on the remote");
  assert.match(root, new RegExp(`^${sshd.remoteHome}/\\.cache/openvaala/plugins/${name}-[0-9a-f]{16}$`),
    "${OPENVAALA_PLUGIN_ROOT} points to the copy in the remote cache");
  assert.equal(fs.readFileSync(path.join(root, ".openvaala-plugin/plugin.yaml"), "utf8"), manifest, "the whole folder is copied");
  h.assertSchemaClean();
});
