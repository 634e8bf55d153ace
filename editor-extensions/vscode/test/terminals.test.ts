// ACP terminal/* on the editor's machine (TerminalManager): what the agent's commands run with,
// what output and exit status the agent is answered, and that nothing outlives a release.
import { test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TerminalManager, DEFAULT_OUTPUT_LIMIT, type ManagedTerminal } from "../src/core/terminals.js";

// these tests wait on processes: a hang fails the test in 10 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 10_000 }, fn);

const S = "s";
const node = process.execPath;

function tmp() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovterm-")));
}

test("a command line runs in a shell in the default folder; a command with args runs without one, in its cwd, with its env", async () => {
  const dir = tmp();
  const sub = path.join(dir, "sub");
  fs.mkdirSync(sub);
  const tm = new TerminalManager(dir);
  const a = tm.create({ sessionId: S, command: "echo $((1+2)) && pwd" });
  assert.deepEqual(await tm.waitForExit({ sessionId: S, terminalId: a.terminalId }), { exitCode: 0, signal: null }, "a clean exit is exit code 0");
  assert.equal(tm.output({ sessionId: S, terminalId: a.terminalId }).output, `3\n${dir}\n`, "a command line without args goes through the shell, in the default folder");
  const b = tm.create({ sessionId: S, command: node, args: ["-e", "process.stdout.write(process.cwd() + ' ' + process.env.OV_T + ' ' + process.argv[1])", "$HOME"], cwd: sub, env: [{ name: "OV_T", value: "tv" }] });
  await tm.waitForExit({ sessionId: S, terminalId: b.terminalId });
  assert.equal(tm.output({ sessionId: S, terminalId: b.terminalId }).output, `${sub} tv $HOME`, "with args: no shell (no expansion), the given cwd and env");
  assert.equal(tm.get(b.terminalId).commandLine, `${node} -e process.stdout.write(process.cwd() + ' ' + process.env.OV_T + ' ' + process.argv[1]) $HOME`, "the command line shown is the command and its args");
  assert.notEqual(a.terminalId, b.terminalId, "each terminal gets its own id");
  assert.equal(tm.all().length, 2, "both are listed");
  const c = tm.create({ sessionId: S, command: node, args: ["-e", "process.stdout.write(String(process.env.PATH === undefined))"] });
  await tm.waitForExit({ sessionId: S, terminalId: c.terminalId });
  assert.equal(tm.output({ sessionId: S, terminalId: c.terminalId }).output, "false", "the editor's environment is inherited");
});

test("stderr is part of the output; a command that cannot start answers exit code 127 with the reason", async () => {
  const tm = new TerminalManager(os.tmpdir());
  const a = tm.create({ sessionId: S, command: node, args: ["-e", "process.stderr.write('err!')"] });
  await tm.waitForExit({ sessionId: S, terminalId: a.terminalId });
  assert.equal(tm.output({ sessionId: S, terminalId: a.terminalId }).output, "err!", "stderr is captured");
  const exits: unknown[] = [];
  tm.listeners.add({ onExit: (_t, st) => exits.push(st) });
  const b = tm.create({ sessionId: S, command: "/no/such/program", args: ["x"] });
  const st = await tm.waitForExit({ sessionId: S, terminalId: b.terminalId });
  assert.deepEqual(st, { exitCode: 127, signal: null }, "a command that cannot start exits 127");
  const out = tm.output({ sessionId: S, terminalId: b.terminalId });
  assert.match(out.output, /^\/no\/such\/program: .*ENOENT/, "the output says why it could not start");
  assert.deepEqual(out.exitStatus, { exitCode: 127, signal: null });
  assert.deepEqual(exits, [{ exitCode: 127, signal: null }], "listeners hear of the exit once");
});

test("output: kept whole under the limit; cut from the front on a UTF-8 boundary over it; exit status only once exited", async () => {
  const tm = new TerminalManager(os.tmpdir());
  const whole = tm.create({ sessionId: S, command: node, args: ["-e", "process.stdout.write('abc')"], outputByteLimit: 3 });
  await tm.waitForExit({ sessionId: S, terminalId: whole.terminalId });
  assert.deepEqual(tm.output({ sessionId: S, terminalId: whole.terminalId }), { output: "abc", truncated: false, exitStatus: { exitCode: 0, signal: null } }, "output at the limit is whole");
  // "é" is two bytes: a cut inside it must not leave half a character
  const cut = tm.create({ sessionId: S, command: node, args: ["-e", "process.stdout.write('xé' + 'é'.repeat(3))"], outputByteLimit: 7 });
  await tm.waitForExit({ sessionId: S, terminalId: cut.terminalId });
  const o = tm.output({ sessionId: S, terminalId: cut.terminalId });
  assert.equal(o.output, "ééé", "the cut keeps the last whole characters within the limit");
  assert.equal(o.truncated, true, "a cut output is marked truncated");
  const none = tm.create({ sessionId: S, command: node, args: ["-e", "process.stdout.write('abc')"], outputByteLimit: 0 });
  await tm.waitForExit({ sessionId: S, terminalId: none.terminalId });
  assert.deepEqual(tm.output({ sessionId: S, terminalId: none.terminalId }).output, "", "a limit of 0 keeps nothing");
  const running = tm.create({ sessionId: S, command: "sleep 5" });
  const r = tm.output({ sessionId: S, terminalId: running.terminalId });
  assert.equal("exitStatus" in r, false, "a running terminal has no exit status");
  assert.equal(tm.get(running.terminalId).running, true, "and is running");
  assert.equal(tm.get(running.terminalId).limit, DEFAULT_OUTPUT_LIMIT, "without outputByteLimit the default limit applies");
  assert.equal(DEFAULT_OUTPUT_LIMIT, 1024 * 1024, "the default limit is 1 MiB");
  tm.kill({ sessionId: S, terminalId: running.terminalId });
  assert.equal((await tm.waitForExit({ sessionId: S, terminalId: running.terminalId })).signal, "SIGKILL", "kill ends the command");
  assert.equal(tm.get(running.terminalId).limit, DEFAULT_OUTPUT_LIMIT);
  const neg = tm.create({ sessionId: S, command: "true", outputByteLimit: -1 });
  assert.equal(tm.get(neg.terminalId).limit, DEFAULT_OUTPUT_LIMIT, "a negative limit means the default");
  await tm.waitForExit({ sessionId: S, terminalId: neg.terminalId });
});

test("kill and release: the whole process group dies; a released terminal is gone; unknown ids are errors", async () => {
  const tm = new TerminalManager(os.tmpdir());
  const events: string[] = [];
  tm.listeners.add({ onCreate: (t) => events.push(`create ${t.id}`), onRelease: (t) => events.push(`release ${t.id}`), onData: () => {} });
  tm.listeners.add({});
  // a shell with a child: killing the terminal must kill the child too
  const dir = tmp();
  const pidFile = path.join(dir, "pid");
  const t = tm.create({ sessionId: S, command: `sleep 30 & echo $! > '${pidFile}'; wait` });
  for (let i = 0; i < 100 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 20));
  const child = Number(fs.readFileSync(pidFile, "utf8"));
  const term = tm.get(t.terminalId);
  assert.deepEqual(tm.kill({ sessionId: S, terminalId: t.terminalId }), {}, "kill is acknowledged");
  await term.exited;
  const alive = () => {
    try {
      process.kill(child, 0);
    } catch {
      return false;
    }
    try {
      return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${child}/stat`, "utf8"));
    } catch {
      return true;
    }
  };
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(alive(), false, "a killed terminal's child processes die with it");
  term.kill(); // killing an exited terminal is harmless
  assert.equal(tm.output({ sessionId: S, terminalId: t.terminalId }).exitStatus?.signal, "SIGKILL", "the kill shows in the exit status");

  const u = tm.create({ sessionId: S, command: "sleep 30" });
  const released = tm.get(u.terminalId);
  assert.deepEqual(tm.release({ sessionId: S, terminalId: u.terminalId }), {}, "release is acknowledged");
  assert.equal(released.released, true);
  assert.equal((await released.exited).signal, "SIGKILL", "release kills a running command");
  assert.deepEqual(events, [`create ${t.terminalId}`, `create ${u.terminalId}`, `release ${u.terminalId}`], "listeners hear of creation and release");
  for (const call of [() => tm.output({ sessionId: S, terminalId: u.terminalId }), () => tm.kill({ sessionId: S, terminalId: "term-99" }), () => tm.release({ sessionId: S, terminalId: "term-99" })]) {
    assert.throws(call, (e: { code?: number; message?: string }) => e.code === -32002 && /unknown terminal/.test(e.message ?? ""), "an unknown terminal is a 'resource not found' error");
  }
  await assert.rejects(tm.waitForExit({ sessionId: S, terminalId: "term-99" }), /unknown terminal term-99/);
});

test("wait_for_exit can be abandoned; disposeAll kills everything", async () => {
  const tm = new TerminalManager(os.tmpdir());
  const t = tm.create({ sessionId: S, command: "sleep 30" });
  const ac = new AbortController();
  const waiting = tm.waitForExit({ sessionId: S, terminalId: t.terminalId }, ac.signal);
  ac.abort();
  await assert.rejects(waiting, /cancelled/, "an abandoned wait_for_exit ends with 'cancelled'");
  assert.equal(tm.get(t.terminalId).running, true, "abandoning the wait does not kill the command");
  const quick = tm.create({ sessionId: S, command: "exit 5" });
  const ac2 = new AbortController();
  assert.deepEqual(await tm.waitForExit({ sessionId: S, terminalId: quick.terminalId }, ac2.signal), { exitCode: 5, signal: null }, "a wait with a signal still answers the exit");
  const terms: ManagedTerminal[] = tm.all();
  tm.disposeAll();
  assert.equal(tm.all().length, 0, "disposeAll forgets every terminal");
  const st = await terms[0]!.exited;
  assert.equal(st.signal, "SIGKILL", "disposeAll kills running commands");
});

test("a released terminal's output stays on screen (ACP), killed and no longer addressable", async () => {
  const tm = new TerminalManager(os.tmpdir());
  const t = tm.create({ sessionId: S, command: "printf done" });
  await tm.waitForExit({ sessionId: S, terminalId: t.terminalId });
  tm.release({ sessionId: S, terminalId: t.terminalId });
  assert.deepEqual(tm.shown().map((x) => [x.id, x.output, x.released]), [[t.terminalId, "done", true]], "the released terminal is still shown with its output");
  assert.equal(tm.all().length, 0, "but it is no longer a live terminal");
  assert.throws(() => tm.output({ sessionId: S, terminalId: t.terminalId }), /unknown terminal/, "and the agent cannot use it any more");
});
