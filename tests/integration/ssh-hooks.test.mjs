// PreToolUse hooks on an ssh executor (issue 39.1) against a real sshd (tests/integration/sshd.mjs):
// a `script:` hook runs on every call, not only right after it was copied; a remote cache deleted
// between two calls is copied again; and a guard that cannot run at all (here or there) blocks the
// tool call with an error notice naming the hook and why, instead of passing silently.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { DEFAULT_CLIENT_CAPABILITIES, executorFiles, lastToolResult, scenario } from "./harness.mjs";
import { sshdForThisFile } from "./sshd.mjs";

const { sshd, sshScenario } = sshdForThisFile();
const call = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }] });
const WITH_NOTICES = { ...DEFAULT_CLIENT_CAPABILITIES, session: { notices: {} } };

/** Fake model, workspace, config (executors/<id>.yaml, hooks/guard.yaml running `script`), server. */
const setUp = (ctx, { script, guard, guardName, executors = {} }) =>
  ctx.setup({
    script,
    configFiles: {
      ...executorFiles(executors),
      "hooks/guard.yaml": `hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n          script: ${guardName}\n`,
      [`hooks/${guardName}`]: guard,
    },
    agentOpts: { clientCapabilities: WITH_NOTICES },
  });

/** The copies of a hook script in the remote user's ~/.cache/openvaala/hooks/<hash>/. */
function remoteCopies(fileName) {
  const root = path.join(sshd.remoteHome, ".cache/openvaala/hooks");
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root).map((d) => path.join(root, d, fileName)).filter((f) => fs.existsSync(f));
}

/** A guard that logs every command it sees to <tag>.log in its working directory and refuses `rm`. */
function loggingGuard(tag) {
  return `#!/bin/sh\ninput=$(cat)\necho "$input" >> ${tag}.log\n` +
    `case "$input" in *'"rm '*) echo "no rm here" >&2; exit 2 ;; esac\nexit 0\n`;
}

function uniqueTag() {
  return `guard-${process.pid}-${Date.now()}`;
}

sshScenario("a PreToolUse script hook on an ssh executor runs on every call, not only the first: it refuses rm each time", async (ctx) => {
  const tag = uniqueTag();
  const victim = sshd.writeRemote(`${tag}-victim.txt`, "keep me\n");
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    guardName: `${tag}.sh`,
    guard: loggingGuard(tag),
    script: [
      call("c_rm1", "bash", { command: `rm ${victim}` }),
      call("c_echo", "bash", { command: "echo between" }),
      call("c_rm2", "bash", { command: `rm ${victim}` }),
      { text: "done" },
    ],
  });
  ctx.defer(() => remoteCopies(`${tag}.sh`).forEach((f) => fs.rmSync(path.dirname(f), { recursive: true, force: true })));
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "clean up")).stopReason, "end_turn");

  const log = fs.readFileSync(path.join(sshd.workdir, `${tag}.log`), "utf8").trim().split("\n");
  assert.equal(log.length, 3, `promise: the remote hook script ran for each of the three bash calls: ${log}`);
  assert.match(lastToolResult(fake, "c_rm1"), /Blocked by a PreToolUse hook.*no rm here/s);
  assert.match(lastToolResult(fake, "c_echo"), /between/);
  assert.match(lastToolResult(fake, "c_rm2"), /Blocked by a PreToolUse hook.*no rm here/s,
    "promise: the second rm is refused too (its hook ran from the cached copy)");
  assert.ok(fs.existsSync(victim), "the file the guard protects is still there");
  assert.deepEqual(h.updatesOf(sessionId, "notice").filter((n) => /hook/.test(n.title)), [], "no hook failed");
  h.assertSchemaClean();
});

sshScenario("a remote hook cache deleted between two calls is copied again and the hook runs", async (ctx) => {
  const tag = uniqueTag();
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    guardName: `${tag}.sh`,
    guard: loggingGuard(tag),
    script: [call("c1", "bash", { command: "echo one" }), { text: "first" }, call("c2", "bash", { command: "echo two" }), { text: "second" }],
  });
  ctx.defer(() => remoteCopies(`${tag}.sh`).forEach((f) => fs.rmSync(path.dirname(f), { recursive: true, force: true })));
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "one")).stopReason, "end_turn");
  const [copy] = remoteCopies(`${tag}.sh`);
  assert.ok(copy, "the script was copied to ~/.cache/openvaala/hooks/<hash>/ there");
  fs.rmSync(path.dirname(copy), { recursive: true, force: true });

  assert.equal((await h.prompt(sessionId, "two")).stopReason, "end_turn");
  assert.ok(fs.existsSync(copy), "promise: the deleted copy is put back before the hook runs");
  const log = fs.readFileSync(path.join(sshd.workdir, `${tag}.log`), "utf8").trim().split("\n");
  assert.equal(log.length, 2, `the hook ran for both calls: ${log}`);
  assert.match(log[1], /echo two/);
  assert.match(lastToolResult(fake, "c2"), /two/);
  h.assertSchemaClean();
});

/** The error notice a blocked call leaves and the tool result the model got, checked together. */
function assertBlockedForNotRunning(h, fake, sessionId, id, why) {
  assert.match(lastToolResult(fake, id), /Blocked by a PreToolUse hook \(guard-[^)]*\.sh\): hook guard-\S+\.sh could not run/,
    `promise: a guard that could not run blocks the call: ${lastToolResult(fake, id)}`);
  const notices = h.updatesOf(sessionId, "notice").filter((n) => /PreToolUse hook/.test(n.title));
  assert.equal(notices.length, 1, JSON.stringify(notices));
  assert.equal(notices[0].severity, "error");
  assert.equal(notices[0].title, "A PreToolUse hook could not run, so the tool call was blocked");
  assert.match(notices[0].description, /hooks\/guard\.yaml:5: could not run \(exit 127: not found\)/, `it names the hook (its file:line) and why: ${notices[0].description}`);
  assert.match(notices[0].description, why);
}

sshScenario("a guard whose interpreter is missing on the ssh executor blocks bash there, with an error notice", async (ctx) => {
  const tag = uniqueTag();
  const marker = path.join(sshd.workdir, `${tag}-ran`);
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    guardName: `${tag}.sh`,
    guard: "#!/nonexistent/openvaala-interpreter\nexit 0\n",
    script: [call("c_bash", "bash", { command: `touch ${marker}` }), { text: "done" }],
  });
  ctx.defer(() => remoteCopies(`${tag}.sh`).forEach((f) => fs.rmSync(path.dirname(f), { recursive: true, force: true })));
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  assert.ok(!fs.existsSync(marker), "the command did not run");
  assertBlockedForNotRunning(h, fake, sessionId, "c_bash", /guard-\S+\.sh: cannot execute: required file not found|openvaala-interpreter/);
  h.assertSchemaClean();
});

scenario("a local guard whose interpreter is missing blocks bash, with an error notice naming it", async (ctx) => {
  const tag = uniqueTag();
  const { fake, ws, h } = await setUp(ctx, {
    guardName: `${tag}.sh`,
    guard: "#!/nonexistent/openvaala-interpreter\nexit 0\n",
    script: [call("c_bash", "bash", { command: "touch ran.txt" }), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  assert.ok(!fs.existsSync(path.join(ws, "ran.txt")), "the command did not run");
  assertBlockedForNotRunning(h, fake, sessionId, "c_bash", /guard-\S+\.sh: cannot execute: required file not found|openvaala-interpreter/);
  h.assertSchemaClean();
});
