// MCP tool calls inside a real turn (issue 17): what one call costs the user, on both paths,
// side by side with its floor, in one interleaved run.
//
//   stdio  : a stdio MCP server from the config (mcp_servers/fast.yaml: tests/fixtures/mcp/tiny-server.mjs,
//            no SDK), called by `openvaala acp` in a turn
//   tunnel : the same tools handed over by the editor through MCP-over-ACP (the ACP SDK client's
//            McpOverAcpProvider with a minimal handler, no MCP SDK behind it)
//
// Per call in the turn: one model response carries N tool calls (then a text step), another turn
// carries 1; model round trips cancel out: per call = (T_N - T_1) / (N - 1), T = the
// session/prompt round trip seen by the client. The session is in full_auto (no permission
// prompt is asked: asserted), each measured turn runs in a fresh session after a text-only warm-up
// turn (so the tunnel's first contact and the session's start are not in T).
// Also reported: "span", from the client's receipt of the first call's tool_call update to the
// last call's completed update, / (N - 1): the same cost without the model requests' share (the
// N calls streamed in and their N results sent back in the next request).
//
// Floors, same N calls, sequential:
//   stdio floor  : a minimal JSON-RPC client in this process on the same server's stdio
//   tunnel floor : the provider's handler called in-process (what the editor side costs without
//                  the ACP hop), and provider.handleRequest with a synthetic context (the SDK's
//                  envelope checks, AbortController plumbing)
//
// Usage: node bench/mcp_turn_bench.mjs [--n 200] [--runs 5] [--bin build/openvaala] [--json]
//        (run from the repository root after `. scripts/node-env.sh`)
//        MCP_TURN_BENCH_HOLD=<path>: before each N-call turn on the given path ("stdio"|"tunnel"),
//        writes the agent's pid to <path> and waits until <path> is removed (for perf/strace -p).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import { Readable, Writable } from "node:stream";
import { REPO_ROOT, agentEnv, makeConfigHome, makeWorkspace, startFakeModel, writeFiles, sleep } from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : def;
};
const N = Number(opt("n", 200));
const RUNS = Number(opt("runs", 5));
const BIN = path.resolve(REPO_ROOT, opt("bin", "build/openvaala"));
const JSON_OUT = argv.includes("--json");
const HOLD = process.env.MCP_TURN_BENCH_HOLD ?? "";
const HOLD_PATH = process.env.MCP_TURN_BENCH_HOLD_PATH ?? "stdio";
const TINY = path.join(REPO_ROOT, "tests/fixtures/mcp/tiny-server.mjs");
const MARKER = `mcp-turn-bench-${process.pid}`;

const us = (ns) => Number(ns) / 1000;

// CPU time (µs) of a process, all its threads, from /proc/<pid>/task/*/schedstat (ns resolution)
function cpuOf(pid) {
  let ns = 0;
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      try { ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]); } catch {}
    }
  } catch {}
  return ns / 1000;
}
function childrenOf(pid) {
  const out = [];
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`))
      out.push(...fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {}
  return out;
}
const selfCpu = () => { const u = process.cpuUsage(); return u.user + u.system; };
const now = () => process.hrtime.bigint();

// ------------------------------------------------------------------------------------------
// the editor's server for the tunnel: the tiny server's `pid` tool, answered directly
// ------------------------------------------------------------------------------------------
const TOOLS = [{ name: "pid", description: "Returns the server's pid", inputSchema: { type: "object", properties: {} } }];
async function tunnelHandler(ctx) {
  switch (ctx.method) {
    case "ping": return { result: {} };
    case "tools/list": return { result: { tools: TOOLS } };
    case "tools/call":
      if (ctx.params?.name === "pid") return { result: { content: [{ type: "text", text: String(process.pid) }] } };
      return { error: { code: -32602, message: `no tool ${ctx.params?.name}` } };
    default: return { error: { code: -32601, message: `no method ${ctx.method}` } };
  }
}

// ------------------------------------------------------------------------------------------
// floors
// ------------------------------------------------------------------------------------------
async function startDirectClient() {
  const child = spawn(process.execPath, [TINY, `${MARKER}-floor`], { stdio: ["pipe", "pipe", "ignore"] });
  let buf = "";
  const waiters = new Map();
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (m.id !== undefined && waiters.has(m.id)) { waiters.get(m.id)(m); waiters.delete(m.id); }
    }
  });
  let id = 0;
  const req = (method, params) => new Promise((r) => { const i = ++id; waiters.set(i, r); child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: i, method, params }) + "\n"); });
  await req("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  for (let i = 0; i < 50; i++) await req("tools/call", { name: "pid", arguments: {} });
  return { req, close: () => child.kill() };
}

async function stdioFloor(client) {
  const t = now();
  for (let i = 0; i < N; i++) {
    const m = await client.req("tools/call", { name: "pid", arguments: {} });
    if (!m.result) throw new Error(`floor: ${JSON.stringify(m)}`);
  }
  return us(now() - t) / N;
}

async function tunnelHandlerFloor() {
  const t = now();
  for (let i = 0; i < N; i++) {
    const r = await tunnelHandler({ method: "tools/call", params: { name: "pid", arguments: {} }, notify() {}, signal: new AbortController().signal });
    if (!r.result) throw new Error("handler floor");
  }
  return us(now() - t) / N;
}

// provider.handleRequest with a synthetic request context on the tunnel path's connection: the
// SDK's binding (envelope checks, AbortController plumbing) without the wire
let providerFloorReg = null;
async function tunnelProviderFloor(p) {
  providerFloorReg ??= p.provider.registerServer(p.h.agent, { name: "floor", handler: tunnelHandler });
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const t = now();
  for (let i = 0; i < N; i++) {
    const r = await p.provider.handleRequest({
      agent: p.h.agent,
      signal: new AbortController().signal,
      params: { serverId: providerFloorReg.serverId, requestId: `floor-${i}`, method: "tools/call", params: { name: "pid", arguments: {}, _meta: meta } },
    });
    if (!r.result) throw new Error(`provider floor: ${JSON.stringify(r)}`);
  }
  return us(now() - t) / N;
}

// ------------------------------------------------------------------------------------------
// the agent, per path
// ------------------------------------------------------------------------------------------
// A lean client: the ACP SDK client straight on the agent's stdio (the integration harness
// validates every line against the ACP schema with ajv, which costs more than the agent's work).
async function startLeanAgent({ env, cwd, onMcpMessage }) {
  const child = spawn(BIN, ["acp"], { cwd, env: agentEnv(env), stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr = (stderr + d).slice(-4000); });
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  let onUpdate = () => {};
  let permissions = 0;
  const app = acpUnstable
    .client({ name: "mcp-turn-bench" })
    .onNotification(acpUnstable.methods.client.session.update, ({ params }) => onUpdate(params))
    .onNotification("*", () => {})
    .onRequest(acpUnstable.methods.client.session.requestPermission, (ctx) => {
      ++permissions; // answered at once; the bench asserts none is asked in full_auto
      const o = ctx.params.options.find((x) => x.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: o.optionId } };
    })
    .onRequest("*", (ctx) => {
      if (ctx.method === "mcp/message" && onMcpMessage) return onMcpMessage(ctx);
      throw new acpUnstable.RequestError(-32601, `Method not found: ${ctx.method}`);
    });
  const connection = app.connect(acpUnstable.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  const agent = connection.agent;
  const request = (method, params) => agent.request(method, params);
  return {
    pid: child.pid,
    agent,
    stderr: () => stderr,
    get permissions() { return permissions; },
    set onUpdate(fn) { onUpdate = fn; },
    request,
    initialize: () => request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "mcp-turn-bench", version: "0" } }),
    newSession: (c, extra) => request("session/new", { cwd: c, mcpServers: [], ...extra }),
    setMode: (sessionId, modeId) => request("session/set_mode", { sessionId, modeId }),
    prompt: (sessionId, text) => request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }),
    async close() {
      try { child.stdin.end(); } catch {}
      await Promise.race([exited, sleep(2000)]);
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
    },
  };
}

async function startPath(kind, fake) {
  const ws = makeWorkspace({ "README.md": "bench\n" });
  const home = makeConfigHome({ provider: "openai", modelUrl: fake.url, idleTimeoutSeconds: 30 });
  if (kind === "stdio") {
    writeFiles(home.configDir, {
      "mcp_servers/fast.yaml":
        "id: fast\ntype: stdio\n" +
        `command: ${JSON.stringify(process.execPath)}\n` +
        `args: [${JSON.stringify(TINY)}, ${JSON.stringify(MARKER)}]\n`,
    });
  }
  const provider = kind === "tunnel" ? new acpUnstable.McpOverAcpProvider() : null;
  const h = await startLeanAgent({ env: home.env, cwd: ws, onMcpMessage: provider ? (ctx) => provider.handleRequest(ctx) : null });
  await h.initialize();
  const reg = provider ? provider.registerServer(h.agent, { name: "fast", handler: tunnelHandler }) : null;
  const mcpServers = reg ? [reg.declaration] : [];
  // a session kept open for the whole run: the configured server stays up (shared by the
  // connection's sessions), warmed with one call
  const keep = await openSession(h, ws, mcpServers, fake);
  await turn(h, keep, fake, 1);
  return { kind, h, ws, mcpServers, home, provider };
}

async function openSession(h, ws, mcpServers, fake) {
  const { sessionId } = await h.newSession(ws, { mcpServers });
  await h.setMode(sessionId, "full_auto");
  fake.push({ text: "ready" });
  const r = await h.prompt(sessionId, "warm up");
  if (r.stopReason !== "end_turn") throw new Error(`warm-up turn: ${r.stopReason}`);
  return sessionId;
}

async function turn(h, sessionId, fake, n) {
  const calls = Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name: "mcp__fast__pid", arguments: {} }));
  fake.push([{ toolCalls: calls }, { text: "done" }]);
  const seen = new Map(); // toolCallId -> [tool_call received at, completed received at]
  let updates = 0;
  h.onUpdate = (p) => {
    if (p.sessionId !== sessionId) return;
    ++updates;
    const u = p.update;
    if (u.sessionUpdate === "tool_call") seen.set(u.toolCallId, [now(), null]);
    else if (u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")) {
      const s = seen.get(u.toolCallId);
      if (s) { s[1] = now(); s.failed = u.status === "failed"; }
    }
  };
  const perms = h.permissions;
  const kids = childrenOf(h.pid);
  const c0 = [cpuOf(h.pid), selfCpu(), kids.reduce((a, k) => a + cpuOf(k), 0)];
  const t0 = now();
  const r = await h.prompt(sessionId, `call pid ${n} times`);
  const t = us(now() - t0);
  const c1 = [cpuOf(h.pid), selfCpu(), kids.reduce((a, k) => a + cpuOf(k), 0)];
  h.onUpdate = () => {};
  if (r.stopReason !== "end_turn") throw new Error(`turn: ${r.stopReason}`);
  if (h.permissions !== perms) throw new Error("a permission prompt was asked");
  const done = [...seen.values()].filter((s) => s[1] && !s.failed);
  if (done.length !== n) throw new Error(`${done.length}/${n} calls completed; agent stderr: ${h.stderr()}`);
  const first = seen.get("call_0")[0], last = seen.get(`call_${n - 1}`)[1];
  return { t, span: us(last - first), updates, agentCpu: c1[0] - c0[0], clientCpu: c1[1] - c0[1], serverCpu: c1[2] - c0[2] };
}

async function measuredTurn(p, fake, n) {
  const sid = await openSession(p.h, p.ws, p.mcpServers, fake);
  if (HOLD && n > 1 && p.kind === HOLD_PATH) {
    fs.writeFileSync(HOLD, String(p.h.pid));
    while (fs.existsSync(HOLD)) await sleep(100);
  }
  const journal = path.join(p.home.dataDir, "sessions", `${sid}.jsonl`);
  const lines = () => { try { return fs.readFileSync(journal, "utf8").split("\n").length - 1; } catch { return NaN; } };
  const l0 = lines();
  const r = await turn(p.h, sid, fake, n);
  r.records = lines() - l0;
  await p.h.request("session/close", { sessionId: sid }).catch(() => {});
  return r;
}

// ------------------------------------------------------------------------------------------
const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (a, d = 0) => `${median(a).toFixed(d)} (${Math.min(...a).toFixed(d)}–${Math.max(...a).toFixed(d)})`;

const fake = await startFakeModel({ script: [] });
const paths = { stdio: await startPath("stdio", fake), tunnel: await startPath("tunnel", fake) };
const direct = await startDirectClient();
const res = {};
const put = (k, v) => (res[k] ??= []).push(v);
// warm-up round, not counted
for (const k of ["stdio", "tunnel"]) { await measuredTurn(paths[k], fake, 1); await measuredTurn(paths[k], fake, N); }
await stdioFloor(direct); await tunnelHandlerFloor(); await tunnelProviderFloor(paths.tunnel);

for (let run = 0; run < RUNS; run++) {
  const order = run % 2 ? ["tunnel", "stdio"] : ["stdio", "tunnel"];
  for (const k of order) {
    const one = await measuredTurn(paths[k], fake, 1);
    const many = await measuredTurn(paths[k], fake, N);
    put(`${k}.T1`, one.t / 1000);
    put(`${k}.TN`, many.t / 1000);
    put(`${k}.perCall`, (many.t - one.t) / (N - 1));
    put(`${k}.span`, many.span / (N - 1));
    put(`${k}.agentCpu`, (many.agentCpu - one.agentCpu) / (N - 1));
    put(`${k}.clientCpu`, (many.clientCpu - one.clientCpu) / (N - 1));
    put(`${k}.updates`, (many.updates - one.updates) / (N - 1));
    put(`${k}.records`, (many.records - one.records) / (N - 1));
    if (k === "stdio") put(`${k}.serverCpu`, (many.serverCpu - one.serverCpu) / (N - 1));
  }
  put("stdio.floor", await stdioFloor(direct));
  put("tunnel.floor", await tunnelHandlerFloor());
  put("tunnel.providerFloor", await tunnelProviderFloor(paths.tunnel));
}

direct.close();
for (const p of Object.values(paths)) await p.h.close();
await fake.close();

if (JSON_OUT) console.log(JSON.stringify({ N, RUNS, bin: BIN, loadavg: os.loadavg(), res }, null, 2));
const added = (k, floorKey) => res[`${k}.perCall`].map((v, i) => v - res[floorKey][i]);
console.log(`N = ${N}, ${RUNS} interleaved runs, ${BIN}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("medians (min–max)");
console.log(`| path | T_1 ms | T_N ms | per call in the turn µs | span/call µs | floor µs | added µs |`);
console.log(`|---|---|---|---|---|---|---|`);
console.log(`| stdio (config) | ${fmt(res["stdio.T1"], 1)} | ${fmt(res["stdio.TN"], 1)} | ${fmt(res["stdio.perCall"])} | ${fmt(res["stdio.span"])} | ${fmt(res["stdio.floor"], 1)} | ${fmt(added("stdio", "stdio.floor"))} |`);
console.log(`| MCP-over-ACP | ${fmt(res["tunnel.T1"], 1)} | ${fmt(res["tunnel.TN"], 1)} | ${fmt(res["tunnel.perCall"])} | ${fmt(res["tunnel.span"])} | ${fmt(res["tunnel.floor"], 1)} (provider.handleRequest: ${fmt(res["tunnel.providerFloor"], 1)}) | ${fmt(added("tunnel", "tunnel.floor"))} |`);
console.log("CPU per call (µs, medians (min–max)): agent process (all threads), this process (ACP client + fake model + editor's MCP handler), the stdio server");
console.log(`| stdio (config) | agent ${fmt(res["stdio.agentCpu"])} | client ${fmt(res["stdio.clientCpu"])} | server ${fmt(res["stdio.serverCpu"])} |`);
console.log(`| MCP-over-ACP | agent ${fmt(res["tunnel.agentCpu"])} | client ${fmt(res["tunnel.clientCpu"])} | – |`);
console.log(`per call: session/update notifications stdio ${fmt(res["stdio.updates"], 2)}, tunnel ${fmt(res["tunnel.updates"], 2)}; journal records stdio ${fmt(res["stdio.records"], 2)}, tunnel ${fmt(res["tunnel.records"], 2)}`);
process.exit(0);
