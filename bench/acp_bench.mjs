#!/usr/bin/env node
// ACP server speed, measured end to end with real processes (run on demand, not in CI):
//   spawn -> initialize response, spawn -> session/new response (medians of many runs),
//   RSS after session/new, and agent_message_chunk throughput from a fast fake model.
// Raw NDJSON on the pipes (no SDK) so the client is not what is measured.
//
//   node bench/acp_bench.mjs [--bin build/openvaala] [--runs 50] [--chunks 100000]
// Start-up is also measured from a native launcher when `spawn_bench` is built next to the
// binary (cmake --build build --target spawn_bench): Node's own spawn costs several ms here.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, agentBinary, agentEnv, makeConfigHome, makeWorkspace, startFakeModel, removeTempDirs } from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bin = path.resolve(REPO_ROOT, opt("--bin", agentBinary()));
const runs = Number(opt("--runs", 50));
const chunkCount = Number(opt("--chunks", 100000));

function startRaw(env, cwd) {
  const t0 = process.hrtime.bigint();
  const child = spawn(bin, ["acp"], { env, cwd, stdio: ["pipe", "pipe", "ignore"] });
  let buf = "";
  const waiters = [];
  const onLine = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      for (const f of onLine) f(line);
      const msg = JSON.parse(line);
      if (msg.id !== undefined) {
        const w = waiters.findIndex((x) => x.id === msg.id);
        if (w >= 0) waiters.splice(w, 1)[0].resolve(msg);
      }
    }
  });
  const request = (id, method, params) =>
    new Promise((resolve) => {
      waiters.push({ id, resolve });
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  return { child, t0, request, onLine };
}

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

// The floor: what spawning any process and reading one line back costs from Node here.
const floor = [];
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  const c = spawn("cat", [], { stdio: ["pipe", "pipe", "ignore"] });
  await new Promise((r) => { c.stdout.once("data", r); c.stdin.write("{}\n"); });
  floor.push(ms(t0));
  c.stdin.end();
  await new Promise((r) => c.on("exit", r));
}

const fake = await startFakeModel();
const home = makeConfigHome({ modelUrl: fake.url });
const env = agentEnv(home.env);
const ws = makeWorkspace({ "a.txt": "a\n" });

const init = [], newSession = [], rss = [];
for (let i = 0; i < runs; i++) {
  const a = startRaw(env, ws);
  await a.request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  init.push(ms(a.t0));
  await a.request(2, "session/new", { cwd: ws, mcpServers: [] });
  newSession.push(ms(a.t0));
  rss.push(rssKb(a.child.pid));
  a.child.stdin.end();
  await new Promise((r) => a.child.on("exit", r));
}

// The same from a native launcher (posix_spawn), if built: see bench/spawn_bench.cpp.
const spawnBench = path.join(path.dirname(bin), "bench", "spawn_bench");
const native = fs.existsSync(spawnBench)
  ? JSON.parse(execFileSync(spawnBench, [bin, String(runs), ws], { env, encoding: "utf8" }))
  : null;

// Throughput: one turn whose response is `chunkCount` text deltas, sent as fast as the fake can.
fake.push({ chunks: Array.from({ length: chunkCount }, (_, i) => `c${i % 10}`) });
const a = startRaw(env, ws);
await a.request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
const { result } = await a.request(2, "session/new", { cwd: ws, mcpServers: [] });
let chunks = 0, first = 0n;
a.onLine.push((line) => {
  if (line.includes('"agent_message_chunk"')) {
    if (!chunks) first = process.hrtime.bigint();
    chunks++;
  }
});
const t0 = process.hrtime.bigint();
await a.request(3, "session/prompt", { sessionId: result.sessionId, prompt: [{ type: "text", text: "go" }] });
const total = ms(t0), streaming = ms(first);
a.child.stdin.end();
await fake.close();
removeTempDirs();

const out = {
  runs,
  spawn_floor_ms_median: +median(floor).toFixed(2),
  spawn_to_initialize_ms_median: +median(init).toFixed(2),
  spawn_to_session_new_ms_median: +median(newSession).toFixed(2),
  native_launcher: native ?? "not built: cmake --build build --target spawn_bench",
  rss_after_session_new_mb_median: +(median(rss) / 1024).toFixed(2),
  chunks_received: chunks,
  chunks_per_second: Math.round(chunks / (streaming / 1000)),
  turn_ms: +total.toFixed(1),
};
console.log(JSON.stringify(out, null, 2));
