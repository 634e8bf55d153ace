// Round trip of a trivial MCP tool call (server-everything `echo`) three ways:
//   direct : a minimal Node JSON-RPC client on the server's stdio (the floor)
//   bridge : our C++ client (bridge/mcp) over stdio, via mcp_probe --bench
//   tunnel : MCP-over-ACP — mcp_probe --acp as the agent, the ACP SDK client hosting an
//            @modelcontextprotocol/sdk server (McpOverAcpProvider), vs calling that handler in-process
// Usage: node bench/mcp_bench.mjs [N]   (MCP_PROBE_BIN, default build-mcp/mcp_probe or build/mcp_probe)
import { spawn } from "node:child_process";
import path from "node:path";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import { REPO_ROOT, makeWorkspace, startAgent } from "../tests/integration/harness.mjs";
import { probeBinary, runProbe } from "../tests/fixtures/mcp/probe.mjs";
import { makeTunnelServer } from "../tests/fixtures/mcp/tunnel-server.mjs";

const N = Number(process.argv[2] ?? 500);
const EVERYTHING = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const stats = (us) => {
  us.sort((a, b) => a - b);
  const mean = us.reduce((a, b) => a + b, 0) / us.length;
  return { mean: mean.toFixed(0), p50: us[Math.floor(us.length / 2)].toFixed(0), p95: us[Math.floor(us.length * 0.95)].toFixed(0) };
};

async function direct() {
  const child = spawn(process.execPath, [EVERYTHING, "stdio"], { stdio: ["pipe", "pipe", "ignore"] });
  let buf = "";
  const waiters = new Map();
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
  for (let i = 0; i < 20; i++) await req("tools/call", { name: "echo", arguments: { message: "x" } });
  const us = [];
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint();
    await req("tools/call", { name: "echo", arguments: { message: "x" } });
    us.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  child.kill();
  return stats(us);
}

async function bridge() {
  const r = await runProbe(["--bench", "echo", '{"message":"x"}', String(N), "--", "stdio", process.execPath, EVERYTHING, "stdio"], { timeout: 120000 });
  const b = r.events.find((e) => e.ev === "bench");
  const c = r.events.find((e) => e.ev === "connected");
  return { mean: b.meanUs.toFixed(0), p50: b.p50Us.toFixed(0), p95: b.p95Us.toFixed(0), connectMs: (c.connectUs / 1000).toFixed(0) };
}

async function tunnel() {
  const t = await makeTunnelServer();
  // in-process: the handler alone
  const us = [];
  for (let i = 0; i < N; i++) {
    const a = process.hrtime.bigint();
    await t.handler({ method: "tools/call", params: { name: "echo", arguments: { message: "x" } }, notify() {}, signal: new AbortController().signal });
    us.push(Number(process.hrtime.bigint() - a) / 1000);
  }
  const inProcess = stats(us);
  const provider = new acpUnstable.McpOverAcpProvider();
  const ws = makeWorkspace({});
  const h = await startAgent({ bin: probeBinary(), args: ["--acp"], cwd: ws, onRequest: (m, p, ctx) => provider.handleRequest(ctx) });
  await h.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const reg = provider.registerServer(h.agent, { name: "b", handler: t.handler });
  const calls = Array.from({ length: N }, () => ({ tool: "mcp__b__echo", arguments: { message: "x" } }));
  const t0 = process.hrtime.bigint();
  const report = await h.request("_probe/run", { cwd: ws, mcpServers: [reg.declaration], calls }, { timeout: 120000 });
  const totalUs = Number(process.hrtime.bigint() - t0) / 1000;
  await h.close();
  await t.close();
  return { inProcess, throughAcpMeanUs: (totalUs / N).toFixed(0), ok: report.calls.filter((c) => c.result && !c.result.isError).length };
}

const d = await direct();
const b = await bridge();
const tn = await tunnel();
console.log(JSON.stringify({ N, direct: d, bridge: b, tunnel: tn }, null, 2));
process.exit(0);
