// Executors (DESIGN §10, issue 12): a session whose tools run on an SSH host through the system
// ssh client — a real sshd on 127.0.0.1 (tests/integration/sshd.mjs) logging into a test user whose
// home and working directory are not ours —, a virtual executor that has files only, the session
// option that switches them, what cancel and SIGKILL leave on the remote (nothing), and each fault
// named in the tool result while the session keeps working.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {
  scenario, agentBinary, agentEnv, assertProcessesGone, executorFiles, lastToolResult, makeWorkspace, sleep, toolCallsById,
  writeFiles,
} from "./harness.mjs";
import { freePort, sshdForThisFile, startSshd } from "./sshd.mjs";

const { sshd, sshScenario } = sshdForThisFile();

/** Fake model + workspace (where.txt says "local") + config with executors/<id>.yaml files. */
const setUp = (ctx, { script, executors = {}, extraYaml = "", files = {} }) =>
  ctx.setup({ script, extraYaml, files: { "where.txt": "local\n", ...files }, configFiles: executorFiles(executors) });

const call = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }] });

sshScenario("a session on an ssh executor reads, patches and runs there; the edit is atomic there and shown as a diff", async (ctx) => {
  sshd.writeRemote("where.txt", "remote\n");
  const patch = "*** Begin Patch\n*** Update File: where.txt\n@@\n-remote\n+patched remotely\n*** End Patch";
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box", "env: {OV_MARK: set-by-executor}\n") },
    script: [
      call("c_read", "read_file", { path: "where.txt" }),
      call("c_patch", "apply_patch", { patch }),
      call("c_bash", "bash", { command: "cat where.txt; pwd; id -un; ls -a | grep -c openvaala || true; echo \"env=$OV_MARK\"" }),
      { text: "done" },
    ],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  const res = await h.prompt(sessionId, "work on the remote");
  assert.equal(res.stopReason, "end_turn");

  assert.match(lastToolResult(fake, "c_read"), /^remote\n?$/, "read_file read the remote where.txt, not the local one");
  assert.equal(fs.readFileSync(path.join(sshd.workdir, "where.txt"), "utf8"), "patched remotely\n", "the patch changed the remote file");
  assert.equal(fs.readFileSync(path.join(ws, "where.txt"), "utf8"), "local\n", "the local file is untouched");
  assert.equal(fs.statSync(path.join(sshd.workdir, "where.txt")).uid, sshd.uid, "written as the remote user");
  const out = lastToolResult(fake, "c_bash");
  assert.match(out, /Exit code: 0/);
  assert.match(out, /patched remotely\n/);
  assert.ok(out.includes(`${sshd.workdir}\n`), `bash ran in the executor's workdir: ${out}`);
  assert.match(out, /\novtest\n/, "bash ran as the remote user");
  assert.match(out, /\n0\n/, "no temp file of the atomic write is left beside the file");
  assert.match(out, /env=set-by-executor/, "the executor's env reaches commands run there");

  // (At least one: other test files may use the same remote user at the same time.)
  assert.ok(sshd.processes("executor-helper").length >= 1, "the operations went to the executor helper there");
  // Nothing went through the editor's fs/terminal: those are local.
  assert.equal(h.requestsOf("fs/read_text_file").length, 0);
  assert.equal(h.requestsOf("fs/write_text_file").length, 0);
  assert.equal(h.requestsOf("terminal/create").length, 0);
  const calls = toolCallsById(h, sessionId);
  const edit = calls.get("c_patch").flatMap((u) => u.content ?? []);
  const diff = edit.find((c) => c.type === "diff");
  assert.ok(diff, `the remote edit is shown as a diff: ${JSON.stringify(edit)}`);
  assert.equal(diff.oldText, "remote\n");
  assert.equal(diff.newText, "patched remotely\n");
  assert.ok(calls.get("c_read").some((u) => /on box/.test(u.title ?? "")), "the title says where it runs");
  // The model is told which executors exist.
  const sys = JSON.stringify(fake.requests[0].body);
  assert.match(sys, /Executors \(/);
  assert.match(sys, /box \(ssh, ovtest@127\.0\.0\.1:\d+\), working directory/);
  assert.match(sys, /Default: box/);
  h.assertSchemaClean();
});

sshScenario("remote command output streams into the tool call while it runs", async (ctx) => {
  const { h, ws } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    script: [call("c_bash", "bash", { command: "for i in 1 2 3 4; do echo tick$i; sleep 0.4; done" }), { text: "ok" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  const done = h.prompt(sessionId, "tick");
  const early = await h.waitForUpdate(
    (u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === "c_bash" && JSON.stringify(u.update.content ?? []).includes("tick1"),
    { timeout: 15000, label: "a tool_call_update with the first line" });
  const finished = toolCallsById(h, sessionId).get("c_bash").some((u) => u.status === "completed" || u.status === "failed");
  assert.ok(!finished, "the first output arrived before the command finished");
  assert.ok(!JSON.stringify(early.update.content).includes("tick4"), "it was not the whole output at the end");
  await done;
});

sshScenario("the executor session option: offered, switched, journaled and kept by session/load", async (ctx) => {
  const { h, ws, home, fake } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    script: [call("c1", "bash", { command: "id -un" }), { text: "one" }, call("c2", "bash", { command: "id -un" }), { text: "two" }],
  });
  const r = await h.newSession(ws);
  const opt = r.configOptions.find((o) => o.id === "executor");
  assert.ok(opt, `configOptions offer executor: ${JSON.stringify(r.configOptions)}`);
  assert.equal(opt.currentValue, "local", "no _meta, no agent executor, no default_executor: local");
  assert.deepEqual(opt.options.map((o) => o.value), ["local", "openvaala", "box"]);
  const set = await h.request("session/set_config_option", { sessionId: r.sessionId, configId: "executor", value: "box" });
  assert.equal(set.configOptions.find((o) => o.id === "executor").currentValue, "box");
  await h.prompt(r.sessionId, "who");
  assert.match(lastToolResult(fake, "c1"), /\novtest\n/, "after switching, bash runs on box");
  const bad = await h.request("session/set_config_option", { sessionId: r.sessionId, configId: "executor", value: "nowhere" }).catch((e) => e);
  assert.equal(bad.code, -32602, "an unknown executor is invalid params");
  assert.match(bad.message, /no executor 'nowhere'/);
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  const loaded = await h2.request("session/load", { sessionId: r.sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loaded.configOptions.find((o) => o.id === "executor").currentValue, "box", "session/load keeps the executor");
  await h2.prompt(r.sessionId, "who again");
  assert.match(lastToolResult(fake, "c2"), /\novtest\n/);
});

sshScenario("default executor: default_executor of config.yaml; an unknown _meta executor is refused", async (ctx) => {
  const { h, ws } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    extraYaml: "default_executor: box\n",
    script: [],
  });
  const r = await h.newSession(ws);
  assert.equal(r.configOptions.find((o) => o.id === "executor").currentValue, "box", "config.yaml's default_executor");
  const err = await h.newSession(ws, { _meta: { openvaala: { executor: "nowhere" } } }).catch((e) => e);
  assert.equal(err.code, -32602);
  assert.match(err.message, /no executor 'nowhere' \(available: local, openvaala, box\)/);
});

for (const how of ["cancel", "SIGKILL of the server"]) {
  sshScenario(`${how} mid-command leaves no process on the remote`, async (ctx) => {
    const marker = `sleep ${how === "cancel" ? 424201 : 424202}`;
    const { h, ws, fake } = await setUp(ctx, {
      executors: { box: sshd.executorYaml("box") },
      script: [call("c_long", "bash", { command: `${marker}; echo never` })],
    });
    const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
    const turn = h.prompt(sessionId, "long").catch((e) => e);
    await h.waitUntil(() => sshd.processes(marker).length > 0, { timeout: 15000, label: "the remote command runs" });
    const t0 = Date.now();
    if (how === "cancel") {
      await h.cancel(sessionId);
      const res = await turn;
      assert.equal(res.stopReason, "cancelled");
    } else {
      process.kill(h.pid, "SIGKILL");
    }
    const ms = await assertProcessesGone(() => sshd.processes(marker), {
      within: 5000, promise: `after ${how}, the remote command (run as ${sshd.user}) is gone`,
    });
    ctx.t.diagnostic(`${how}: remote process gone ${Date.now() - t0} ms after (polled ${ms} ms)`);
    if (how === "cancel") {
      // The session keeps working, on the same connection.
      fake.push([call("c_next", "bash", { command: "echo still here" }), { text: "ok" }]);
      await h.prompt(sessionId, "again");
      assert.match(lastToolResult(fake, "c_next"), /still here/);
    }
  });
}

sshScenario("faults name the executor in the tool result and the session keeps working", async (ctx) => {
  const closedPort = await freePort();
  const strangerKey = path.join(fs.mkdtempSync("/tmp/ov-key-"), "id");
  spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", strangerKey]);
  ctx.defer(() => fs.rmSync(path.dirname(strangerKey), { recursive: true, force: true }));
  const emptyKnownHosts = path.join(path.dirname(strangerKey), "known_hosts");
  fs.writeFileSync(emptyKnownHosts, "");
  const { h, ws, fake } = await setUp(ctx, {
    executors: {
      down: sshd.executorYaml("down").replace(`port: ${sshd.port}`, `port: ${closedPort}`),
      nokey: sshd.executorYaml("nokey").replace(`identity_file: ${sshd.identityFile}`, `identity_file: ${strangerKey}`),
      stranger: sshd.executorYaml("stranger").replace(`UserKnownHostsFile=${sshd.knownHosts}`, `UserKnownHostsFile=${emptyKnownHosts}`),
      drop: sshd.executorYaml("drop"),
      docs: `type: virtual\nroot: ${makeWorkspace({ "note.md": "virtual note\n" })}\nread_only: true\n`,
    },
    script: [
      call("c_down", "read_file", { path: "where.txt", executor: "down" }),
      call("c_nokey", "bash", { command: "true", executor: "nokey" }),
      call("c_stranger", "read_file", { path: "where.txt", executor: "stranger" }),
      call("c_drop", "bash", { command: "sleep 424203", executor: "drop" }),
      call("c_unknown", "bash", { command: "true", executor: "nowhere" }),
      call("c_vbash", "bash", { command: "touch /tmp/ov-should-not-exist", executor: "docs" }),
      call("c_vread", "read_file", { path: "/note.md", executor: "docs" }),
      call("c_vpatch", "apply_patch", { patch: "*** Begin Patch\n*** Add File: x.md\n+x\n*** End Patch", executor: "docs" }),
      call("c_local", "read_file", { path: "where.txt" }),
      { text: "survived" },
    ],
  });
  const { sessionId } = await h.newSession(ws);
  const turn = h.prompt(sessionId, "faults", { timeout: 60000 });
  // Drop the connection of `drop` while its command runs: kill its ssh master.
  await h.waitUntil(() => sshd.processes("sleep 424203").length > 0, { timeout: 20000, label: "the command on drop runs" });
  const masters = spawnSync("pgrep", ["-f", `^ssh: /tmp/openvaala-ssh-[^ ]*/drop \\[mux\\]`], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
  const mine = masters.filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/status`, "utf8").match(/PPid:\s+(\d+)/)[1] === String(h.pid);
    } catch {
      return false;
    }
  });
  assert.equal(mine.length, 1, `one ssh master of this agent for 'drop': ${masters}`);
  process.kill(mine[0], "SIGKILL");
  const res = await turn;
  assert.equal(res.stopReason, "end_turn");

  assert.match(lastToolResult(fake, "c_down"), /executor 'down' \(ssh ovtest@127\.0\.0\.1:\d+\): cannot connect: connection refused/);
  assert.match(lastToolResult(fake, "c_nokey"), /executor 'nokey' .*authentication refused/);
  assert.match(lastToolResult(fake, "c_stranger"), /executor 'stranger' .*the host key is not trusted: add it to ~\/\.ssh\/known_hosts/,
    "an unknown host key is refused, never accepted (BatchMode, host keys checked)");
  assert.match(lastToolResult(fake, "c_drop"), /executor 'drop' .*the connection was lost/);
  assert.match(lastToolResult(fake, "c_unknown"), /There is no executor 'nowhere' \(available: local, openvaala, docs, down, drop, nokey, stranger\)/);
  assert.match(lastToolResult(fake, "c_vbash"), /Executor 'docs' \(virtual\) has files only: bash cannot run there/);
  assert.ok(!fs.existsSync("/tmp/ov-should-not-exist"), "never attempted");
  assert.equal(lastToolResult(fake, "c_vread"), "virtual note\n");
  assert.match(lastToolResult(fake, "c_vpatch"), /Executor 'docs' is read-only/);
  assert.equal(lastToolResult(fake, "c_local"), "local\n", "the session keeps working on local");
  assert.equal(h.requestsOf("session/request_permission").filter((r) => r.params.toolCall?.toolCallId === "c_vbash").length, 0,
    "no permission was asked for a bash that cannot run there");
  await assertProcessesGone(() => sshd.processes("sleep 424203"), { within: 5000, promise: "the dropped connection's command is gone" });
});

sshScenario("a host without bash or tar: bash is refused naming the executor, files still work, config check says what is missing", async (ctx) => {
  // A PATH with sh and the file tools but neither bash nor tar (sshd's SetEnv).
  const bin = fs.mkdtempSync("/tmp/ov-nobash-");
  for (const c of ["sh", "cat", "mkdir", "mktemp", "mv", "rm", "dirname", "chmod", "stat", "wc"]) {
    const where = spawnSync("sh", ["-c", `command -v ${c}`], { encoding: "utf8" }).stdout.trim();
    fs.symlinkSync(where, path.join(bin, c));
  }
  fs.chmodSync(bin, 0o755);
  ctx.defer(() => fs.rmSync(bin, { recursive: true, force: true }));
  const bare = await startSshd({ pathDirs: [bin] });
  ctx.defer(() => bare.close());
  bare.writeRemote("where.txt", "bare host\n");
  const { h, ws, fake, home } = await setUp(ctx, {
    executors: { bare: bare.executorYaml("bare") },
    script: [call("c_bash", "bash", { command: "echo hi", executor: "bare" }), call("c_read", "read_file", { path: "where.txt", executor: "bare" }), { text: "ok" }],
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "try");
  assert.match(lastToolResult(fake, "c_bash"), /executor 'bare' \(ssh [^)]*\): bash is not installed there/);
  assert.equal(lastToolResult(fake, "c_read"), "bare host\n");
  const r = spawnSync(agentBinary(), ["config", "check", "--executor", "bare"], { env: agentEnv(home.env), encoding: "utf8" });
  assert.equal(r.status, 1, "a host without bash fails the check");
  assert.match(r.stdout, /bash: NOT FOUND/);
  assert.match(r.stdout, /tar: not found/);
});

sshScenario("rewind_files puts back the agent's edits on an ssh executor, there: a created file deleted, a file changed by hand left alone", async (ctx) => {
  sshd.writeRemote("a.txt", "a0\n");
  sshd.writeRemote("b.txt", "b0\n");
  const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a0\n+a1\n*** Update File: b.txt\n@@\n-b0\n+b1\n*** Add File: new.txt\n+created\n*** End Patch";
  const { h, ws } = await setUp(ctx, {
    executors: { box: sshd.executorYaml("box") },
    files: { "a.txt": "local a\n" },
    script: [call("c_patch", "apply_patch", { patch }), call("c_cmd", "bash", { command: "echo by-command > cmd.txt" }), { text: "changed" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  await h.setMode(sessionId, "full_auto");
  await h.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "change them" }], messageId: "m-1" });
  const there = (name) => (fs.existsSync(path.join(sshd.workdir, name)) ? fs.readFileSync(path.join(sshd.workdir, name), "utf8") : null);
  assert.equal(there("a.txt"), "a1\n");
  assert.equal(there("new.txt"), "created\n");
  const byName = (r) => Object.fromEntries(r.files.map((f) => [f.path, f.action]));
  const key = (name) => `@box:${path.join(sshd.workdir, name)}`;

  const dry = await h.request("_session/rewind_files", { sessionId, messageId: "m-1", dryRun: true });
  assert.deepEqual(byName(dry), { [key("a.txt")]: "restore", [key("b.txt")]: "restore", [key("new.txt")]: "delete" },
    "promise: the remote files are listed by executor and path there");
  assert.equal(there("a.txt"), "a1\n", "a dry run changes nothing");

  sshd.writeRemote("b.txt", "by hand\n");
  const done = await h.request("_session/rewind_files", { sessionId, messageId: "m-1" });
  assert.deepEqual(byName(done), { [key("a.txt")]: "restore", [key("b.txt")]: "conflict", [key("new.txt")]: "delete" });
  assert.equal(there("a.txt"), "a0\n", "promise: a file the agent changed on the executor is put back there");
  assert.equal(there("new.txt"), null, "promise: a file the agent created there is deleted");
  assert.equal(there("b.txt"), "by hand\n", "promise: a remote file changed by hand is left alone");
  assert.match(done.note ?? "", /Commands ran on executor 'box', where what commands change is not checkpointed/,
    "promise: a restore says that commands run on another executor are not put back");
  assert.equal(there("cmd.txt"), "by-command\n");
  assert.equal(fs.readFileSync(path.join(ws, "a.txt"), "utf8"), "local a\n", "the local file of the same name is not touched");
  const again = await h.request("_session/rewind_files", { sessionId, messageId: "m-1", dryRun: true });
  assert.deepEqual(byName(again), { [key("b.txt")]: "conflict" }, "what was put back is not listed again");
  h.assertSchemaClean();
});

sshScenario("config check --executor: what it found there, or exactly why not", async (ctx) => {
  const closedPort = await freePort();
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9" });
  writeFiles(home.configDir, {
    "executors/box.yaml": sshd.executorYaml("box"),
    "executors/down.yaml": sshd.executorYaml("down").replace(`port: ${sshd.port}`, `port: ${closedPort}`),
  });
  const run = (...args) => spawnSync(agentBinary(), ["config", "check", ...args], { env: agentEnv(home.env), encoding: "utf8" });
  const ok = run("--executor", "box");
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^ {2}box {2}ssh {2}ovtest@127\.0\.0\.1:\d+ {2}workdir /m, "listed with the executors");
  assert.match(ok.stdout, /Executor box: reachable/);
  assert.ok(ok.stdout.includes(`working directory: ${sshd.workdir}`), ok.stdout);
  assert.match(ok.stdout, /bash: yes/);
  assert.match(ok.stdout, /tar: yes/);
  assert.match(ok.stdout, /round trip \d+(\.\d+)? ms/);
  assert.match(ok.stdout, /helper: running \(~\/\.cache\/openvaala\/bin\/[0-9a-f]+\/openvaala there\)/);
  const js = JSON.parse(run("--executor", "box", "--json").stdout);
  assert.equal(js.executor_check.reachable, true);
  assert.equal(js.executor_check.working_directory, sshd.workdir);
  const down = run("--executor", "down");
  assert.equal(down.status, 1);
  assert.match(down.stdout, /Executor down: not reachable\n {2}executor 'down' \(ssh [^)]*\): cannot connect: connection refused/);
});

scenario("a broken executor file is reported by config check with path:line", async (ctx) => {
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9" });
  writeFiles(home.configDir, { "executors/vm.yaml": "type: ssh\nhost: h\nport: 0\n" });
  const r = spawnSync(agentBinary(), ["config", "check"], { env: agentEnv(home.env), encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.ok(r.stdout.includes(`${path.join(home.configDir, "executors", "vm.yaml")}:3: 'port' must be a port number (1-65535)`), r.stdout);
});
