// The engine through ACP: skills from all seven places become slash commands, a reload adds
// one, and slash commands attach the skill to the message the model gets.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { scenario, waitUntil, expectRpcError, withTimeout, sleep, agentBinary } from "./harness.mjs";

function skill(dir, name, description) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\nSteps for ${name}.\n`);
}

function commandsOf(h, sessionId) {
  const updates = h.updatesOf(sessionId, "available_commands_update");
  return updates.length ? updates.at(-1).availableCommands.map((c) => c.name) : [];
}

/**
 * `file` as a FIFO (a file on a slow network file system): whatever reads it blocks until the
 * test writes. `reader(label)` waits until a reader has it open (opening it for writing without
 * blocking works only then); `write(text)` then `release()` lets that read end.
 */
function slowFile(ctx, file) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  execFileSync("mkfifo", [file]);
  let writer = null;
  const release = () => {
    if (writer === null) return;
    fs.closeSync(writer);
    writer = null;
  };
  ctx.defer(release);
  return {
    reader: (label) =>
      waitUntil(() => {
        try {
          writer = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
          return true;
        } catch {
          return false;
        }
      }, { label, timeout: 10000 }),
    write: (text) => fs.writeSync(writer, text),
    release,
  };
}

scenario("skills from all seven places are slash commands; a reload adds one; /name attaches the skill", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "reviewing" }, { text: "plain" }]);
  const ws = ctx.workspace({ "README.md": "x\n" });
  execFileSync("git", ["init", "-q", ws]);
  const home = ctx.configHome({ modelUrl: fake.url });
  skill(path.join(ws, ".agents/skills/proj-agents"), "proj-agents", "From the project .agents");
  skill(path.join(ws, ".claude/skills/proj-claude"), "proj-claude", "From the project .claude");
  skill(path.join(home.configDir, "skills/private-one"), "private-one", "From the private dir");
  const plugin = path.join(home.configDir, "plugins/review");
  fs.mkdirSync(path.join(plugin, ".openvaala-plugin"), { recursive: true });
  fs.writeFileSync(path.join(plugin, ".openvaala-plugin/plugin.yaml"), "name: review\nversion: 1.0.0\ndescription: Review helpers\n");
  skill(path.join(plugin, "skills/checklist"), "checklist", "A review checklist");
  skill(path.join(home.homeDir, ".agents/skills/home-agents"), "home-agents", "From ~/.agents");
  skill(path.join(home.homeDir, ".claude/skills/home-claude"), "home-claude", "From ~/.claude");

  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => commandsOf(h, sessionId).length > 0, { label: "available_commands_update" });
  const names = commandsOf(h, sessionId);
  for (const n of ["proj-agents", "proj-claude", "private-one", "openvaala", "review:checklist", "home-agents", "home-claude"])
    assert.ok(names.includes(n), `missing /${n} in ${JSON.stringify(names)}`);

  // The model sees every skill's name, description and path.
  assert.equal((await h.prompt(sessionId, "/review:checklist look at main.c")).stopReason, "end_turn");
  const first = JSON.stringify(fake.requests[0].body.messages);
  assert.match(first, /proj-claude/);
  assert.match(first, /A review checklist/);
  assert.match(first, /Steps for checklist\./, "the skill's text is attached to the message");
  assert.match(first, /look at main\.c/);

  // An unknown /command is plain text.
  assert.equal((await h.prompt(sessionId, "/not-a-skill hello")).stopReason, "end_turn");
  const last = fake.requests[1].body.messages.at(-1);
  assert.equal(last.content, "/not-a-skill hello");

  // A new skill plus SIGHUP: the session gets it without restarting.
  // In a plugin: plugins are not watched (skill-watch.test.mjs), so only the signal brings it in.
  skill(path.join(plugin, "skills/added-later"), "added-later", "Added after start");
  process.kill(h.child.pid, "SIGHUP");
  await waitUntil(() => commandsOf(h, sessionId).includes("review:added-later"), { label: "reload adds /review:added-later", timeout: 5000 });
  h.assertSchemaClean();
});

scenario("session/new does not wait for the skills: a slow SKILL.md holds back only the slash commands and the first turn", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "done" }]);
  const ws = ctx.workspace({ "README.md": "x\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  skill(path.join(home.configDir, "skills/private-one"), "private-one", "From the private dir");
  // The built-in skill's file, which the skills' load reads back, as a FIFO (a file on a slow
  // network file system): reading it blocks the load until this test writes to it.
  const version = /(\d+\.\d+\.\d+\S*)/.exec(execFileSync(agentBinary(), ["--version"]).toString())[1];
  const slow = slowFile(ctx, path.join(home.cacheDir, "builtin-skills", version, "openvaala", "SKILL.md"));

  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await withTimeout(h.newSession(ws), 8000, "session/new must not wait for the skills to load");
  // The premise: the skills' load is reading the FIFO right now.
  await slow.reader("the skills' load reads the built-in skill's file");
  assert.equal(h.updatesOf(sessionId, "available_commands_update").length, 0,
    "no slash command list before the skills are loaded (it would lack them)");
  // A prompt cancelled while it waits for the skills ends at once, without a model call.
  const early = h.prompt(sessionId, "never mind");
  await sleep(100);
  await h.cancel(sessionId);
  assert.equal((await withTimeout(early, 5000, "a prompt cancelled while the skills load must end")).stopReason, "cancelled");
  const turn = h.prompt(sessionId, "/private-one go");
  await sleep(300);
  assert.equal(fake.requests.length, 0, "the first turn waits for the skills before it calls the model");

  slow.write("---\nname: openvaala\ndescription: stale copy\n---\n");
  slow.release();
  assert.equal((await turn).stopReason, "end_turn");
  assert.match(JSON.stringify(fake.requests[0].body.messages), /Steps for private-one\./,
    "the slash command sent before the skills were loaded attaches the skill");
  await waitUntil(() => commandsOf(h, sessionId).includes("private-one") && commandsOf(h, sessionId).includes("openvaala"),
    { label: "the slash commands arrive once the skills are loaded" });
  h.assertSchemaClean();
});

scenario("session/new waits only for the settings: a slow plugin manifest holds back the session's hooks and its first turn, not the answer", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "done" }]);
  const ws = ctx.workspace({ "README.md": "x\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  // A hook from hooks/ (read in the same step as the plugins): its context shows the turn ran
  // with the engine's extensions.
  const hooksDir = path.join(home.configDir, "hooks");
  fs.mkdirSync(hooksDir, { recursive: true });
  fs.writeFileSync(path.join(hooksDir, "prompt.yaml"),
    "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: prompt.sh\n");
  fs.writeFileSync(path.join(hooksDir, "prompt.sh"), "#!/bin/sh\ncat >/dev/null\necho 'The user prefers tabs.'\n", { mode: 0o755 });
  // A plugin manifest as a FIFO (a plugin on a slow network file system): reading it blocks the
  // load of the plugins, hooks and MCP servers until this test writes to it.
  const manifest = path.join(home.configDir, "plugins/slow/.openvaala-plugin/plugin.yaml");
  const slow = slowFile(ctx, manifest);

  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await withTimeout(h.newSession(ws), 8000, "session/new must not wait for the plugins and hooks to load");
  await slow.reader("the load reads the plugin's manifest");
  const turn = h.prompt(sessionId, "hello");
  await sleep(300);
  assert.equal(fake.requests.length, 0, "the first turn waits for the hooks before it calls the model");

  slow.write("name: slow\nversion: 1.0.0\n");
  // The whole load (with the skills) reads the manifest again, once this read has ended: a
  // regular file by then.
  fs.writeFileSync(`${manifest}.new`, "name: slow\nversion: 1.0.0\n");
  fs.renameSync(`${manifest}.new`, manifest);
  slow.release();
  assert.equal((await withTimeout(turn, 10000, "the turn runs once the load is in")).stopReason, "end_turn");
  assert.match(JSON.stringify(fake.requests[0].body.messages), /The user prefers tabs\./,
    "the turn runs with the hooks the load brought");
  h.assertSchemaClean();
});

scenario("/skill:name is refused clearly when the skill is not available to this agent", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  fs.mkdirSync(path.join(home.configDir, "agents"), { recursive: true });
  fs.writeFileSync(path.join(home.configDir, "agents/default.yaml"), "name: default\nskills: [openvaala]\n");
  skill(path.join(home.configDir, "skills/secret"), "secret", "Not for this agent");
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "/skill:secret do it")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 0, "a refused command never reaches the model");
  assert.match(h.textOf(sessionId), /secret/);
  h.assertSchemaClean();
});

scenario("a broken plugin manifest: the session shows it, naming file and line, and refuses prompts until the file is fixed", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "reviewed" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const plugin = path.join(home.configDir, "plugins/review");
  const manifest = path.join(plugin, ".openvaala-plugin/plugin.yaml");
  fs.mkdirSync(path.dirname(manifest), { recursive: true });
  fs.writeFileSync(manifest, "name: review\nversion: [1.0\n");
  skill(path.join(plugin, "skills/checklist"), "checklist", "A review checklist");
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const at = new RegExp(`${manifest.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+: `);

  // session/new waits only for the settings (config.yaml, agents, executors), which load.
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => /configuration does not load/.test(h.textOf(sessionId)),
    { label: "the session shows that the configuration does not load" });
  assert.match(h.textOf(sessionId), at, "the notice names the manifest's file and line");
  const err = await expectRpcError(h.prompt(sessionId, "review this"), "a prompt while a plugin does not load");
  assert.match(err.message, /configuration does not load/);
  assert.match(err.message, at, "the refusal names the manifest's file and line");
  assert.match(err.message, /openvaala config check.*the next prompt reads the files again/, "the refusal says how to get out of it");
  assert.equal(fake.requests.length, 0, "no model is called with a configuration that does not load");
  assert.equal(h.exitInfo, null, "the server stays up");

  // Fixing the file is enough: the next prompt reads it again, in the same session.
  fs.writeFileSync(manifest, "name: review\nversion: 1.0.0\n");
  assert.equal((await h.prompt(sessionId, "review this")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 1);
  await waitUntil(() => commandsOf(h, sessionId).includes("review:checklist"), { label: "the plugin's skill as a command" });
  h.assertSchemaClean();
});
