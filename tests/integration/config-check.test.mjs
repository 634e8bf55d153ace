// `openvaala config check [--cwd DIR] [--json]` (DESIGN §3): what a session in DIR would see, each
// item with its source, every problem as path:line: message, exit 1 on errors; the model a
// session would use, where its API key comes from (never the key) or why it cannot be used.
import assert from "node:assert/strict";
import { spawnSync, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scenario, agentBinary, agentEnv, makeConfigHome, makeWorkspace, writeFiles } from "./harness.mjs";

const SECRET = "sk-cc-SECRET-81d3";

function check(home, args, extraEnv = {}) {
  const env = { ...home.env, ...extraEnv };
  const r = spawnSync(agentBinary(), ["config", "check", ...args], { env: agentEnv(env), encoding: "utf8" });
  assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), "an API key is never printed");
  return r;
}

const skill = (name, description) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`;

// A project inside a git repository, skills in three places with one name clash, an MCP server
// file, a hook file with a mistake on line 5.
function setUp({ hookMistake = true } = {}) {
  const home = makeConfigHome({ modelUrl: "http://127.0.0.1:9" });
  const repo = makeWorkspace({ "AGENTS.md": "root rules\n", "pkg/app/AGENTS.md": "app rules\n" });
  execFileSync("git", ["init", "-q", repo]);
  const cwd = path.join(repo, "pkg", "app");
  writeFiles(cwd, { ".agents/skills/deploy/SKILL.md": skill("deploy", "Project deploy steps") });
  writeFiles(home.configDir, {
    "skills/deploy/SKILL.md": skill("deploy", "Private deploy steps"),
    "skills/notes/SKILL.md": skill("notes", "Private notes"),
    "mcp_servers/files.yaml": "id: files\ntype: stdio\ncommand: npx\nargs: [server-filesystem, /tmp]\n",
    "hooks/guard.yaml": hookMistake
      ? "hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: commnd\n          command: 'true'\n"
      : "hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n          command: 'true'\n",
  });
  return { home, repo, cwd };
}

scenario("config check (text): skills with sources and the shadowed one, AGENTS.md chain, MCP, hooks, model, problems with path:line; exit 1", async () => {
  const { home, repo, cwd } = setUp();
  const r = check(home, ["--cwd", cwd]);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const out = r.stdout;
  assert.match(out, new RegExp(`Session directory: ${cwd} \\(git root ${repo}\\)`));
  assert.match(out, /^ {2}\/deploy {2}\[.*\] {2}.*pkg\/app\/\.agents\/skills\/deploy\/SKILL\.md$/m, "the project's deploy wins");
  assert.match(out, /\(shadowed\) deploy .*config\/skills\/deploy\/SKILL\.md/);
  assert.match(out, /^ {2}\/notes /m);
  assert.match(out, /^ {2}\/openvaala /m, "the built-in skill");
  const chain = out.slice(out.indexOf("AGENTS.md ("), out.indexOf("MCP servers"));
  assert.ok(chain.indexOf(path.join(repo, "AGENTS.md")) < chain.indexOf(path.join(cwd, "AGENTS.md")), chain);
  assert.match(out, /^ {2}files {2}stdio {2}npx server-filesystem \/tmp {2}\[.*mcp_servers\/files\.yaml\]/m);
  assert.match(out, /^Model: fake\/test-model \(from .*config\.yaml\)$/m);
  assert.match(out, /^ {2}API key: from \$FAKE_MODEL_KEY$/m);
  assert.match(out, /Problems: 1 error\(s\)/);
  assert.match(out, new RegExp(`^${path.join(home.configDir, "hooks", "guard.yaml")}:5: .*commnd`, "m"));
});

scenario("config check --json: the same as data; a clean configuration exits 0", async () => {
  const { home, cwd } = setUp({ hookMistake: false });
  const r = check(home, ["--cwd", cwd, "--json"]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.ok, true);
  assert.deepEqual(d.problems, []);
  const deploy = d.skills.find((s) => s.name === "deploy");
  assert.match(deploy.path, /pkg\/app\/\.agents\/skills\/deploy\/SKILL\.md$/);
  assert.equal(d.shadowed_skills.length, 1);
  assert.match(d.shadowed_skills[0].path, /config\/skills\/deploy/);
  assert.notEqual(deploy.source, d.shadowed_skills[0].source);
  assert.deepEqual(d.agents_md.map((f) => path.basename(path.dirname(f.path))), [path.basename(path.dirname(path.dirname(cwd))), "app"]);
  assert.deepEqual(d.mcp_servers.map((s) => [s.id, s.type, s.command]), [["files", "stdio", "npx"]]);
  assert.equal(d.hooks.count, 1);
  assert.equal(d.model, "fake/test-model");
  assert.equal(d.api_key_source, "$FAKE_MODEL_KEY");
  assert.equal(d.model_problem, null);
});

scenario("config check: the model a session would use ($OPENVAALA_MODEL over config.yaml) and a missing key", async () => {
  const home = makeConfigHome({ modelUrl: "http://127.0.0.1:9" });
  const noKeys = { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
  const r = check(home, ["--json"], { ...noKeys, OPENVAALA_MODEL: "anthropic/claude-x" });
  const d = JSON.parse(r.stdout);
  assert.equal(d.model, "anthropic/claude-x");
  assert.equal(d.model_source, "$OPENVAALA_MODEL");
  assert.equal(d.api_key_source, null);
  assert.match(d.model_problem, /ANTHROPIC_API_KEY/);
  assert.match(d.model_problem, /openvaala login --provider anthropic/);
  assert.equal(r.status, 0, "a missing key is reported, not a configuration error");
  const keyProblem = d.problems.find((p) => /ANTHROPIC_API_KEY/.test(p.message));
  assert.ok(keyProblem, `the unusable model is one of the problems: ${JSON.stringify(d.problems)}`);
  assert.equal(keyProblem.severity, "warning");
  assert.equal(keyProblem.path, "$OPENVAALA_MODEL", "the problem names where the model comes from");
  assert.equal(d.ok, true);
  const text = check(home, [], { ...noKeys, OPENVAALA_MODEL: "anthropic/claude-x" }).stdout;
  assert.match(text, /^ {2}Cannot be used: The provider 'anthropic' needs an API key/m);
});

scenario("config check: credentials.yaml problems are reported with path:line, a loose mode warned, the key never shown", async () => {
  const home = makeConfigHome({ modelUrl: "http://127.0.0.1:9", provider: "anthropic" });
  const creds = path.join(home.configDir, "credentials.yaml");
  fs.writeFileSync(creds, `providers:\n  fake:\n    api_key: ${SECRET}\n  other:\n    api_key: ""\n`, { mode: 0o644 });
  fs.chmodSync(creds, 0o644);
  const r = check(home, ["--json"], { FAKE_MODEL_KEY: "" });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  const d = JSON.parse(r.stdout);
  const texts = d.problems.map((p) => p.text);
  assert.ok(texts.includes(`${creds}:5: provider 'other': 'api_key' is empty`), texts.join("\n"));
  assert.ok(texts.some((t) => t.startsWith(`${creds}: warning: holds API keys but its mode is 0644`)), texts.join("\n"));
  assert.equal(d.api_key_source, creds, "the stored key is used when the variable is empty");
});

scenario("config check: usage errors exit 2 and say what is wrong", async () => {
  const home = makeConfigHome({ modelUrl: "http://127.0.0.1:9" });
  const bad = check(home, ["--frobnicate"]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown option for 'config check': --frobnicate/);
  const notDir = check(home, ["--cwd", "/nonexistent/ov-dir"]);
  assert.equal(notDir.status, 2);
  assert.match(notDir.stderr, /--cwd: not a directory: \/nonexistent\/ov-dir/);
});

scenario("config check: no model configured is a problem whose message says how to set one (not \"0 problems\")", async () => {
  const home = makeConfigHome({ provider: null });
  const noModel = { OPENVAALA_MODEL: "", ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
  const r = check(home, [], noModel);
  assert.equal(r.status, 0, "a missing model is a warning: the files themselves load");
  assert.match(r.stdout, /^Problems: 0 error\(s\), 1 warning\(s\)$/m, r.stdout);
  const line = r.stdout.split("\n").find((l) => l.startsWith(`${home.configPath}: warning: `));
  assert.ok(line, `the warning names config.yaml:\n${r.stdout}`);
  assert.match(line, /No model is configured/);
  assert.match(line, /model: <provider>\/<model>/, "the fix: the model line");
  assert.match(line, /openvaala login/, "or the login");

  const d = JSON.parse(check(home, ["--json"], noModel).stdout);
  assert.equal(d.model, null);
  assert.match(d.model_problem, /No model is configured/);
  assert.deepEqual(d.problems.map((p) => [p.severity, p.path]), [["warning", home.configPath]]);

  // A model naming a provider that is not defined is already a configuration error (path:line),
  // and is not counted twice.
  fs.writeFileSync(home.configPath, "model: nowhere/m\n");
  const bad = check(home, [], noModel);
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /^Problems: 1 error\(s\), 0 warning\(s\)$/m, bad.stdout);
  assert.match(bad.stdout, new RegExp(`^${home.configPath}:1: model 'nowhere/m' names provider 'nowhere'`, "m"));
});
