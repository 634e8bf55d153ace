// read_file without the editor (the agent reads the file itself): a FIFO, `/dev/stdin` and other
// files that are not regular are refused at once with a clear message, and the session (and the
// agent's own ACP input) go on as before.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { SLACK, agentBinary, scenario, toolCallStatuses, toolResultText, withTimeout } from "./harness.mjs";

const read = (id, p) => ({ id, name: "read_file", arguments: { path: p } });
// No fs capability: the agent opens the files itself.
const AGENT_READS = Object.freeze({});

scenario("read_file of FIFOs inside the session's folder fails at once, saying why, and the sessions go on", async (ctx) => {
  const pipes = [0, 1, 2, 3].map((i) => `pipe${i}`);
  const fake = await ctx.fakeModel([
    { toolCalls: pipes.map((p, i) => read(`call_fifo${i}`, p)) },
    { text: "Those are pipes." },
    { text: "Still here." },
    { text: "The other session answers." },
  ]);
  const ws = ctx.workspace({});
  for (const p of pipes) execFileSync("mkfifo", [path.join(ws, p)]);
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: AGENT_READS });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);

  const promise = "a read of a FIFO (nobody writes to it) is refused at once instead of holding a thread forever";
  const started = Date.now();
  const first = await withTimeout(h.prompt(sessionId, "read the pipes"), 10000, `${promise}: the turn`);
  assert.equal(first.stopReason, "end_turn", promise);
  assert.ok(Date.now() - started < 5000 * SLACK, `${promise}: took ${Date.now() - started} ms`);
  pipes.forEach((p, i) => {
    const text = toolResultText(fake.requests[1], `call_fifo${i}`);
    assert.match(text, /not a regular file/, `${promise}: the model is told why (${text})`);
    assert.match(text, /FIFO/, `${promise}: and what the file is (${text})`);
    assert.ok(text.includes(path.join(ws, p)), `${promise}: naming the file (${text})`);
    assert.equal(toolCallStatuses(h, sessionId, `call_fifo${i}`).at(-1), "failed", `${promise}: the call failed`);
  });

  assert.equal((await withTimeout(h.prompt(sessionId, "go on"), 10000, "the next turn")).stopReason, "end_turn",
    "the session keeps working after the refused reads");
  const other = await h.newSession(ws);
  assert.equal((await withTimeout(h.prompt(other.sessionId, "hi"), 10000, "another session's turn")).stopReason, "end_turn",
    "another session keeps working");
  h.assertSchemaClean();
});

scenario("Full auto: read_file of /dev/stdin or /proc/self/fd/0 is refused and never eats the editor's requests", async (ctx) => {
  const fake = await ctx.fakeModel([
    { toolCalls: [read("call_stdin", "/dev/stdin"), read("call_fd0", "/proc/self/fd/0")] },
    { text: "Refused." },
    { text: "Still answering." },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  // Editors give the agent a pipe as stdin (Node's own spawn gives a socket, which open() refuses
  // anyway): `cat` in front makes it one.
  const h = await ctx.agent({
    env: home.env, cwd: ws, clientCapabilities: AGENT_READS,
    bin: "/bin/sh", args: ["-c", `cat | exec "${agentBinary()}" acp`],
  });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");

  const promise = "the agent's own ACP input is not a file the model may read: it would swallow the editor's requests";
  const first = await withTimeout(h.prompt(sessionId, "read stdin"), 10000, `${promise}: the turn`);
  assert.equal(first.stopReason, "end_turn", promise);
  for (const id of ["call_stdin", "call_fd0"]) {
    // (A containment rule may refuse these paths before the read: refused either way.)
    assert.match(toolResultText(fake.requests[1], id), /not a regular file|Refused/, `${promise}: ${id} refused, saying why`);
    assert.equal(toolCallStatuses(h, sessionId, id).at(-1), "failed", `${promise}: ${id} failed`);
  }
  assert.equal((await withTimeout(h.prompt(sessionId, "still there?"), 10000, "the next turn")).stopReason, "end_turn",
    `${promise}: the next prompt is answered`);
  h.assertSchemaClean();
});

scenario("read_file of a 256 MiB file answers its first 256 KB, says so, and never holds the file in memory", async (ctx) => {
  const fake = await ctx.fakeModel([{ toolCalls: [read("call_big", "big.log")] }, { text: "Read the start." }]);
  const ws = ctx.workspace({ "big.log": "" });
  fs.truncateSync(path.join(ws, "big.log"), 256 << 20);  // sparse: one 256 MiB line of zeros, no disk used
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: AGENT_READS });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await withTimeout(h.prompt(sessionId, "read big.log"), 20000, "the turn")).stopReason, "end_turn");

  const text = toolResultText(fake.requests[1], "call_big");
  assert.match(text, /truncated at 256 KB; read further with offset\/limit/, "the model is told the answer was cut");
  assert.ok(text.length <= 256 * 1024 + 100, `the model gets at most 256 KB: ${text.length}`);
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${h.pid}/status`, "utf8"))[1]) << 10;
  assert.ok(peak < 128 << 20, `a read costs what the model is given, not the file: the agent peaked at ${peak >> 20} MiB`);
  h.assertSchemaClean();
});
