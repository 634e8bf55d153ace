// A plugin with N stdio MCP servers, as a user with many plugins has: how long session/new takes,
// how many server processes K sessions cost, and how long the way out takes (stdin EOF → the
// agent has exited → no server process is left). Binaries are run in turn (A B A B …) so a
// comparison holds when the machine's speed drifts; the figures are medians (min–max).
//
//   node bench/mcp_scale_bench.mjs [--servers 100] [--sessions 10] [--runs 5] [--stubborn]
//                                  [--bin LABEL=PATH ...]    (default: after=$OPENVAALA_BIN or build/openvaala)
// --stubborn: the servers are shell loops that ignore SIGTERM and never answer initialize (the
// worst case for the way out); otherwise tests/fixtures/mcp/tiny-server.mjs (Node, no SDK).
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, agentBinary, agentEnv, makeConfigHome, makeWorkspace, pgrep, processesInGroups, removeTempDirs, sleep, writeFiles } from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const N = Number(opt("servers", 100));
const K = Number(opt("sessions", 10));
const RUNS = Number(opt("runs", 5));
const STUBBORN = argv.includes("--stubborn");
const bins = [];
argv.forEach((a, i) => {
  if (a === "--bin") {
    const [label, p] = argv[i + 1].split("=");
    bins.push({ label, bin: path.resolve(p) });
  }
});
if (!bins.length) bins.push({ label: "after", bin: agentBinary() });
const TINY = path.join(REPO_ROOT, "tests/fixtures/mcp/tiny-server.mjs");

function pluginConfig(marker) {
  const servers = Array.from({ length: N }, (_, i) => {
    const cmd = STUBBORN
      ? `    command: /bin/sh\n    args: ["-c", "trap '' TERM; while read -r l; do :; done; while :; do sleep 1; done", "${marker}"]\n`
      : `    command: ${process.execPath}\n    args: ["${TINY}", "${marker}"]\n`;
    return `  - id: s${i}\n    type: stdio\n${cmd}`;
  }).join("");
  return `name: scale\nversion: 1.0.0\ndescription: ${N} MCP servers\nmcp_servers:\n${servers}`;
}

async function once({ bin }) {
  const marker = `ovscale-${crypto.randomBytes(5).toString("hex")}`;
  const home = makeConfigHome({ modelUrl: "http://127.0.0.1:9" });  // session/new needs a model configured
  writeFiles(home.configDir, { "plugins/scale/.openvaala-plugin/plugin.yaml": pluginConfig(marker) });
  const ws = makeWorkspace({});
  const child = spawn(bin, ["acp"], { cwd: ws, env: agentEnv(home.env), stdio: ["pipe", "pipe", "ignore"] });
  const exited = new Promise((r) => child.once("exit", () => r(process.hrtime.bigint())));
  let buf = "";
  const waiters = new Map();
  child.stdout.on("data", (d) => {
    buf += d;
    for (let nl; (nl = buf.indexOf("\n")) >= 0;) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      if (m.id !== undefined && waiters.has(m.id)) {
        waiters.get(m.id)(m);
        waiters.delete(m.id);
      }
    }
  });
  let id = 0;
  const req = (method, params) => new Promise((r) => {
    const i = ++id;
    waiters.set(i, r);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: i, method, params }) + "\n");
  });
  const ms = (a, b) => Number(b - a) / 1e6;
  await req("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const newMs = [];
  for (let k = 0; k < K; k++) {
    const t0 = process.hrtime.bigint();
    const r = await req("session/new", { cwd: ws, mcpServers: [] });
    newMs.push(ms(t0, process.hrtime.bigint()));
    if (!r.result) throw new Error(`session/new failed: ${JSON.stringify(r)}`);
  }
  // the servers start in the background: wait until their number stops growing
  let count = 0;
  for (let stable = 0, last = -1, t = Date.now(); stable < 10 && Date.now() - t < 60000; await sleep(100)) {
    count = pgrep(marker).length;
    stable = count === last && count > 0 ? stable + 1 : 0;
    last = count;
  }
  const pgids = new Set(pgrep(marker).filter((p) => p !== child.pid));
  const t0 = process.hrtime.bigint();
  child.stdin.end();
  const tExit = await exited;
  while (processesInGroups(pgids).length) await sleep(5);
  const tGone = process.hrtime.bigint();
  return { firstNewMs: newMs[0], newMs: newMs.slice(1), processes: count, exitMs: ms(t0, tExit), goneMs: ms(t0, tGone) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

const results = new Map(bins.map((b) => [b.label, []]));
for (let r = 0; r < RUNS; r++) for (const b of bins) results.get(b.label).push(await once(b));
removeTempDirs();

console.log(`${N} ${STUBBORN ? "stubborn (ignore SIGTERM, never answer)" : "tiny Node"} stdio MCP servers in one plugin, ${K} sessions, ${RUNS} runs each, medians (min–max)`);
console.log("| binary | first session/new ms | sessions 2..K session/new ms | server processes | stdin EOF → agent exited ms | stdin EOF → no server left ms |");
console.log("|---|---|---|---|---|---|");
for (const [label, rs] of results) {
  console.log(`| ${label} | ${fmt(rs.map((x) => x.firstNewMs))} | ${K > 1 ? fmt(rs.flatMap((x) => x.newMs)) : "–"} | ${fmt(rs.map((x) => x.processes))} | ${fmt(rs.map((x) => x.exitMs))} | ${fmt(rs.map((x) => x.goneMs))} |`);
}
