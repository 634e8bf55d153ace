// The big configuration of the engine benches (engine_load_bench.cpp's tree): private skills (a
// third nested in group folders), ~/.agents/skills, 100 OpenVaala plugins of 10 skills each with a
// `hooks:` section, 200 hooks/*.yaml files (300 hooks in all), 20 MCP server files (disabled), 5
// agents, a project three levels below a git root with an AGENTS.md at each level and 20 project
// skills. `skills` scales the private, ~/.agents and per-plugin counts (2,000 → 600 / 400 / 10 a
// plugin).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { agentEnv } from "../tests/integration/harness.mjs";

export const skillMd = (n, description = `Use when working on ${n} tasks; it lists the steps, the checks and the files to touch.`) =>
  `---\nname: ${n}\ndescription: ${description}\n` +
  `license: MIT\n---\n# ${n}\n\n1. Read the relevant files.\n2. Make the change.\n3. Run the tests.\n${"x".repeat(1500)}\n`;

export function makeBigConfig({ prefix = "ov-bench-", skillCount = 2000, hookFiles = 200, pluginHooks = true } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const cfg = path.join(root, "config"), home = path.join(root, "home"), proj = path.join(root, "work/repo/pkg/app");
  const write = (p, text) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };
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
  return { root, cfg, home, proj, env, skills: privateCount + homeCount + 100 * perPlugin, privateCount };
}
