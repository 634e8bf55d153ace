#!/usr/bin/env node
// session/new with a big configuration, as an editor sees it from a fresh server (issue 17):
// spawn `openvaala acp`, send `initialize`, then `session/new` the moment it is answered, and
// time (from that session/new) its answer and the session's first `available_commands_update`
// (which comes once every skill is loaded). Raw NDJSON on the pipes, no SDK.
//
//   node bench/session_new_bench.mjs [--bin build/openvaala] [--bin2 other/openvaala] [--runs 15]
//                                    [--skills 2000] [--hook-files 200] [--no-plugin-hooks] [--log]
// --log: one more run with the agent's debug log on stderr (OPENVAALA_LOG=debug), to see where
// the time goes.
// The tree is bench/big_config.mjs's (engine_load_bench.cpp's); --skills scales it. The MCP
// servers are `disabled: true`, so no process starts after the answer. With --bin2 the two binaries run
// in turns (one run each, alternating), so load changes hit both alike.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { REPO_ROOT, agentBinary } from "../tests/integration/harness.mjs";
import { makeBigConfig } from "./big_config.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bins = [opt("--bin", agentBinary()), opt("--bin2", null)].filter(Boolean).map((b) => path.resolve(REPO_ROOT, b));
const runs = Number(opt("--runs", 15));
const skillCount = Number(opt("--skills", 2000));
const hookFiles = Number(opt("--hook-files", 200));  // and --no-plugin-hooks: what the hooks cost
const pluginHooks = !argv.includes("--no-plugin-hooks");

const { root, proj, env, skills } = makeBigConfig({ prefix: "ov-session-new-bench-", skillCount, hookFiles, pluginHooks });

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

// One fresh server: spawn → initialize → session/new → its answer → its commands.
function once(bin, { log = false } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(bin, ["acp"], {
      env: log ? { ...env, OPENVAALA_LOG: "debug", OPENVAALA_LOG_STDERR: "debug" } : env,
      cwd: proj,
      stdio: ["pipe", "pipe", log ? "inherit" : "ignore"],
    });
    let tNew = 0n, tSecond = 0n, out = {}, sessionId = null;
    const send = (id, method, params) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    const timer = setTimeout(() => reject(new Error("no answer in 30 s")), 30000);
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      if (msg.id === 1) {
        out.initialize = ms(t0);
        tNew = process.hrtime.bigint();
        send(2, "session/new", { cwd: proj, mcpServers: [] });
      } else if (msg.id === 2) {
        if (!msg.result) return reject(new Error(`session/new failed: ${line}`));
        out.sessionNew = ms(tNew);
        sessionId = msg.result.sessionId;
      } else if (msg.method === "session/update" && msg.params?.update?.sessionUpdate === "available_commands_update" &&
                 out.commands === undefined) {
        out.commands = ms(tNew);
        out.commandCount = msg.params.update.availableCommands.length;
        if (msg.params.sessionId !== sessionId) return reject(new Error("commands before the session/new answer"));
        // A second session with everything loaded: what session/new itself costs.
        tSecond = process.hrtime.bigint();
        send(3, "session/new", { cwd: proj, mcpServers: [] });
      } else if (msg.id === 3) {
        if (!msg.result) return reject(new Error(`the second session/new failed: ${line}`));
        out.secondSessionNew = ms(tSecond);
        clearTimeout(timer);
        child.stdin.end();
        child.once("exit", () => resolve(out));
      }
    });
    send(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  });
}

const results = bins.map(() => ({ initialize: [], sessionNew: [], commands: [], secondSessionNew: [], commandCount: 0 }));
for (const bin of bins) await once(bin); // warm the page cache
for (let r = 0; r < runs; r++)
  for (let b = 0; b < bins.length; b++) {
    const o = await once(bins[b]);
    for (const k of ["initialize", "sessionNew", "commands", "secondSessionNew"]) results[b][k].push(o[k]);
    results[b].commandCount = o.commandCount;
  }
if (argv.includes("--log")) for (const bin of bins) await once(bin, { log: true });
fs.rmSync(root, { recursive: true, force: true });

const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: +s[Math.floor(s.length / 2)].toFixed(2), min: +s[0].toFixed(2), max: +s.at(-1).toFixed(2) };
};
console.log(JSON.stringify({
  skills, plugins: 100, hookFiles, pluginHooks, runs,
  load: os.loadavg().map((x) => +x.toFixed(2)),
  results: bins.map((bin, b) => ({
    bin,
    spawn_to_initialize_ms: summary(results[b].initialize),
    session_new_answer_ms: summary(results[b].sessionNew),
    session_new_to_commands_ms: summary(results[b].commands),
    second_session_new_ms: summary(results[b].secondSessionNew),
    commands: results[b].commandCount,
  })),
}, null, 1));
