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
// The tree is engine_load_bench.cpp's: private skills (a third nested in group folders),
// ~/.agents/skills, 100 OpenVaala plugins of 10 skills each with a `hooks:` section, 200
// hooks/*.yaml files (300 hooks in all), 20 MCP server files, 5 agents, a project three levels
// below a git root with an AGENTS.md at each level and 20 project skills. --skills scales the
// private, ~/.agents and per-plugin counts (2,000 → 600 / 400 / 10 a plugin). The MCP servers
// are `disabled: true`, so no process starts after the answer. With --bin2 the two binaries run
// in turns (one run each, alternating), so load changes hit both alike.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { REPO_ROOT, agentBinary, agentEnv } from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bins = [opt("--bin", agentBinary()), opt("--bin2", null)].filter(Boolean).map((b) => path.resolve(REPO_ROOT, b));
const runs = Number(opt("--runs", 15));
const skillCount = Number(opt("--skills", 2000));
const hookFiles = Number(opt("--hook-files", 200));  // and --no-plugin-hooks: what the hooks cost
const pluginHooks = !argv.includes("--no-plugin-hooks");

const root = fs.mkdtempSync(path.join(os.tmpdir(), "ov-session-new-bench-"));
const cfg = path.join(root, "config"), home = path.join(root, "home"), proj = path.join(root, "work/repo/pkg/app");
const write = (p, text) => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
};
const skillMd = (n) =>
  `---\nname: ${n}\ndescription: Use when working on ${n} tasks; it lists the steps, the checks and the files to touch.\n` +
  `license: MIT\n---\n# ${n}\n\n1. Read the relevant files.\n2. Make the change.\n3. Run the tests.\n${"x".repeat(1500)}\n`;

const scale = skillCount / 2000;
const privateCount = Math.round(600 * scale), homeCount = Math.round(400 * scale), perPlugin = Math.round(10 * scale);
for (let i = 0; i < privateCount; i++) {
  const n = `private-${i}`;
  write(path.join(cfg, "skills", i % 3 === 0 ? `group-${i % 10}/${n}` : n, "SKILL.md"), skillMd(n));
}
for (let i = 0; i < homeCount; i++) write(path.join(home, ".agents/skills", `home-${i}`, "SKILL.md"), skillMd(`home-${i}`));
for (let p = 0; p < 100; p++) {
  const name = `plugin-${p}`, dir = path.join(cfg, "plugins", name);
  write(path.join(dir, ".openvaala-plugin/plugin.yaml"),
    `name: ${name}\nversion: 1.0.${p}\ndescription: Plugin ${name}\n` +
    (pluginHooks ? `hooks:\n  PostToolUse:\n    - matcher: apply_patch\n      hooks:\n        - type: command\n          command: echo formatted\n` : ""));
  for (let s = 0; s < perPlugin; s++) write(path.join(dir, "skills", `skill-${s}`, "SKILL.md"), skillMd(`skill-${s}`));
}
for (let h = 0; h < hookFiles; h++)
  write(path.join(cfg, "hooks", `hook-${h}.yaml`),
    `hooks:\n  PreToolUse:\n    - matcher: bash|apply_patch\n      hooks:\n        - type: command\n` +
    `          command: echo check ${h}\n          timeout: 10\n`);
for (let m = 0; m < 20; m++)
  write(path.join(cfg, "mcp_servers", `server-${m}.yaml`), `id: server-${m}\ntype: stdio\ncommand: uvx\nargs: [tool, serve]\ndisabled: true\n`);
for (let a = 0; a < 5; a++)
  write(path.join(cfg, "agents", `agent-${a}.yaml`), `description: Agent ${a}\ninstructions: Be careful.\nmcp_servers: [server-1, server-2]\n`);
// A provider nobody answers (port 9): the model list fetched at start-up fails fast, off the path.
write(path.join(cfg, "config.yaml"), "model: main/gpt-4.1\nproviders:\n  main:\n    api_type: openai\n    base_url: http://127.0.0.1:9/v1\n    api_key_env: K\n");
fs.mkdirSync(path.join(root, "work/repo/.git"), { recursive: true });
write(path.join(root, "work/repo/AGENTS.md"), "root rules\n");
write(path.join(root, "work/repo/pkg/AGENTS.md"), "pkg rules\n");
write(path.join(proj, "AGENTS.md"), "app rules\n");
for (let i = 0; i < 20; i++) write(path.join(proj, ".agents/skills", `proj-${i}`, "SKILL.md"), skillMd(`proj-${i}`));

const env = agentEnv({
  OPENVAALA_CONFIG_DIR: cfg,
  OPENVAALA_DATA_DIR: path.join(root, "data"),
  OPENVAALA_CACHE_DIR: path.join(root, "cache"),
  HOME: home,
  K: "sk-bench",
});

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
  skills: privateCount + homeCount + 100 * perPlugin, plugins: 100, hookFiles, pluginHooks, runs,
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
