#!/usr/bin/env node
// Executors (DESIGN §10): what a tool call costs on an ssh executor over a warm multiplexed
// connection to a loopback sshd, and in a podman container (exec mode; the set-up of
// scripts/podman-test-env.sh), against local; and the first use (connect). Run on demand (as
// root: it starts sshd with tests/integration/sshd.mjs). Figures: docs/PERFORMANCE.md.
//
//   node bench/executors_bench.mjs [--bin build/openvaala] [--calls 40] [--no-container]
// Per call: the time from the tool_call announcement to its completed update, median and p90,
// seen by an ACP client (the SDK harness) — the same client for every row.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { REPO_ROOT, agentBinary, makeConfigHome, makeWorkspace, startAgent, startFakeModel, writeFiles, removeTempDirs } from "../tests/integration/harness.mjs";
import { startSshd } from "../tests/integration/sshd.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bin = path.resolve(REPO_ROOT, opt("--bin", agentBinary()));
const calls = Number(opt("--calls", 40));

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function measure(sshd, { executor, tool, capabilities }) {
  const args = tool === "read_file" ? { path: "file.txt" } : { command: "echo hi" };
  const script = [];
  for (let i = 0; i < calls + 1; i++) script.push({ toolCalls: [{ id: `c${i}`, name: tool, arguments: args }] });
  script.push({ text: "done" });
  const fake = await startFakeModel({ script });
  const ws = makeWorkspace({ "file.txt": "x\n".repeat(100) });
  sshd.writeRemote("file.txt", "x\n".repeat(100));
  const home = makeConfigHome({ modelUrl: fake.url });
  // `-cmd`: the same executor without the helper (one channel command per operation).
  writeFiles(home.configDir, {
    "executors/box.yaml": sshd.executorYaml("box"),
    "executors/box-cmd.yaml": sshd.executorYaml("box-cmd", "helper: false\n"),
  });
  if (container) {
    execFileSync("podman", ["exec", "-i", container, "sh", "-c", "mkdir -p /srv/bench && cat > /srv/bench/file.txt"], { input: "x\n".repeat(100) });
    const yaml = `type: container\ncontainer: ${container}\nworkdir: /srv/bench\n`;
    writeFiles(home.configDir, { "executors/ctr.yaml": yaml, "executors/ctr-cmd.yaml": `${yaml}helper: false\n` });
  }
  const started = new Map();
  const took = new Map();
  const h = await startAgent({
    bin, env: home.env, cwd: ws, clientCapabilities: capabilities, permission: "allow_always",
    onUpdate: (p) => {
      const u = p.update;
      const now = performance.now();
      if (u.sessionUpdate === "tool_call") started.set(u.toolCallId, now);
      else if (u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))
        took.set(u.toolCallId, now - started.get(u.toolCallId));
    },
  });
  await h.initialize();
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor } } });
  await h.setMode(sessionId, "full_auto");
  await h.prompt(sessionId, "go", { timeout: 300000 });
  await h.close();
  await fake.close();
  const first = took.get("c0");
  const warm = [...took.entries()].filter(([id]) => id !== "c0").map(([, v]) => v);
  return { first, median: quantile(warm, 0.5), p90: quantile(warm, 0.9), n: warm.length };
}

// A running container of the test image for the `ctr` rows (podman's own set-up in .tools/podman).
let container = null;
if (!argv.includes("--no-container")) {
  const out = execFileSync(path.join(REPO_ROOT, "scripts/podman-test-env.sh"), { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  for (const m of out.matchAll(/^export (\w+)=(.*)$/gm)) process.env[m[1]] = m[2].replace(/^'(.*)'$/, "$1");
  container = `ov-bench-${process.pid}`;
  execFileSync("podman", ["run", "-d", "--init", "--name", container, "--entrypoint", "sleep", "localhost/openvaala-test:1", "infinity"]);
}

const sshd = await startSshd();
try {
  const editor = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };
  const bare = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
  const rows = [];
  for (const tool of ["read_file", "bash"]) {
    rows.push([tool, "local, through the editor", await measure(sshd, { executor: "local", tool, capabilities: editor })]);
    rows.push([tool, "local, by the server itself", await measure(sshd, { executor: "local", tool, capabilities: bare })]);
    // Pair by pair: a command per operation, then the helper, back to back.
    rows.push([tool, "ssh, a command per operation", await measure(sshd, { executor: "box-cmd", tool, capabilities: editor })]);
    rows.push([tool, "ssh, the helper", await measure(sshd, { executor: "box", tool, capabilities: editor })]);
    if (container) {
      rows.push([tool, "container, a command per operation", await measure(sshd, { executor: "ctr-cmd", tool, capabilities: editor })]);
      rows.push([tool, "container, the helper", await measure(sshd, { executor: "ctr", tool, capabilities: editor })]);
    }
  }
  console.log(`| tool | where | first call (ms) | warm median (ms) | warm p90 (ms) | calls |`);
  console.log(`| --- | --- | ---: | ---: | ---: | ---: |`);
  for (const [tool, where, r] of rows)
    console.log(`| ${tool} | ${where} | ${r.first.toFixed(1)} | ${r.median.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.n} |`);
} finally {
  if (container) execFileSync("podman", ["rm", "-f", "-t", "0", container]);
  await sshd.close();
  removeTempDirs();
}
