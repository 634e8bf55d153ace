#!/usr/bin/env node
// One SKILL.md edited in a running server with a big configuration (issue 17: "a reload after one
// changed SKILL.md ≤ 5 ms at 20,000 skills"). Each run rewrites one private skill's description
// and times, from the write:
//   - reload: the server's own figure (its log: file event → the sessions use the new skill), and
//     how long its sessions' slash command lists then took to send;
//   - commands: until the editor has the `available_commands_update` that shows it (the whole
//     list, every skill, is sent again: ACP has no partial update).
// Timed in turns with it, a second server (its own copy of the tree) where each run edits a plugin's
// skill instead, which is not watched, and sends SIGHUP (`openvaala serve reload`): the whole reload
// every SKILL.md edit needed before the skill places were watched.
//
//   node bench/skill_reload_bench.mjs [--bin build/openvaala] [--runs 20] [--skills 20000]
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { REPO_ROOT, agentBinary } from "../tests/integration/harness.mjs";
import { makeBigConfig, skillMd } from "./big_config.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const runs = Number(opt("--runs", 20));
const skillCount = Number(opt("--skills", 20000));
const bin = opt("--bin", agentBinary());
const servers = [
  { label: "private skill edited: read again in place", bin, signal: false, skill: "private-1", dir: ["skills", "private-1"] },
  { label: "plugin skill edited + SIGHUP: whole reload", bin, signal: true, skill: "plugin-0:skill-1", dir: ["plugins", "plugin-0", "skills", "skill-1"] },
];

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

// A server with a session open and its commands in; `edit(r)` times one run.
async function start(server) {
  const tree = makeBigConfig({ prefix: "ov-skill-reload-bench-", skillCount });
  const child = spawn(path.resolve(REPO_ROOT, server.bin), ["acp"], {
    env: { ...tree.env, OPENVAALA_LOG_STDERR: "info" },
    cwd: tree.proj,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d.toString()));
  let waiter = null;
  const send = (id, method, params) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const msg = JSON.parse(line);
    if (waiter && waiter.test(msg)) {
      const w = waiter;
      waiter = null;
      w.resolve(msg);
    }
  });
  const next = (test, label, timeout = 60000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${server.label}: no ${label} in ${timeout} ms`)), timeout);
      waiter = { test, resolve: (m) => (clearTimeout(timer), resolve(m)) };
    });
  const isCommands = (m) => m.method === "session/update" && m.params?.update?.sessionUpdate === "available_commands_update";
  let p = next((m) => m.id === 1, "initialize answer");
  send(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  await p;
  p = next(isCommands, "first commands");
  send(2, "session/new", { cwd: tree.proj, mcpServers: [] });
  await p;
  if (!server.signal) {
    const t = Date.now();
    while (!/skills: watching \d+ folders/.test(stderr)) {
      if (Date.now() - t > 60000) throw new Error(`${server.label}: the skill folders are not watched: ${stderr.slice(-500)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const { skill } = server;
  const file = path.join(tree.cfg, ...server.dir, "SKILL.md");
  const frontmatterName = skill.split(":").at(-1);
  return {
    server,
    tree,
    child,
    async edit(r) {
      const description = `Edited in run ${r} of the skill reload bench.`;
      const seen = next((m) => isCommands(m) && m.params.update.availableCommands.some((c) => c.name === skill && c.description === description),
                        `commands with run ${r}'s edit`);
      const logged = stderr.length;
      const t0 = process.hrtime.bigint();
      fs.writeFileSync(file, skillMd(frontmatterName, description));
      if (server.signal) child.kill("SIGHUP");
      await seen;
      const commands = ms(t0);
      // The server logs once the list is sent: the line may come a moment after it.
      for (let i = 0; i < 100 && !server.signal && !/read again in/.test(stderr.slice(logged)); i++)
        await new Promise((r) => setTimeout(r, 10));
      const m = /read again in (\d+) µs \(the sessions' slash commands sent in (\d+) µs/.exec(stderr.slice(logged));
      return { commands, reload: m ? Number(m[1]) / 1000 : null, send: m ? Number(m[2]) / 1000 : null };
    },
    async stop() {
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await exited;
      fs.rmSync(tree.root, { recursive: true, force: true });
    },
  };
}

const started = [];
for (const s of servers) started.push(await start(s));
const results = started.map(() => ({ commands: [], reload: [], send: [] }));
for (let r = 0; r < runs + 1; r++)
  for (let i = 0; i < started.length; i++) {
    const o = await started[i].edit(r);
    if (r === 0) continue;  // warm-up
    results[i].commands.push(o.commands);
    if (o.reload !== null) results[i].reload.push(o.reload);
    if (o.send !== null) results[i].send.push(o.send);
  }
for (const s of started) await s.stop();

const summary = (xs) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return { median: +s[Math.floor(s.length / 2)].toFixed(2), min: +s[0].toFixed(2), max: +s.at(-1).toFixed(2) };
};
console.log(JSON.stringify({
  skills: started[0].tree.skills, runs, load: os.loadavg().map((x) => +x.toFixed(2)),
  results: started.map((s, i) => ({
    label: s.server.label,
    bin: s.server.bin,
    reload_ms: summary(results[i].reload),
    commands_sent_after_ms: summary(results[i].send),
    write_to_commands_ms: summary(results[i].commands),
  })),
}, null, 1));
