// Commands in the sandbox (README "Sandbox"): in every mode but Full auto, `bash` runs under
// Landlock, locally and in the editor's terminal: the config root (credentials.yaml,
// mcp_tokens.json) cannot be read, and writes land only in the session's folders and the temp
// folders. The workspaces here lie outside /tmp (the temp folders are writable in the sandbox,
// so "outside" must be elsewhere). `sandbox: off` in config.yaml runs commands unconfined.
import assert from "node:assert/strict";
import fs from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { scenario, toolResultText, agentBinary, agentEnv, REPO_ROOT, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

const bash = (id, command) => ({ toolCalls: [{ id, name: "bash", arguments: { command } }] });
const NO_TERMINAL = { fs: { readTextFile: true, writeTextFile: true }, terminal: false };

// A workspace outside the temp folders: <base>/proj is the session's folder, <base> is outside it.
function outsideTmp(ctx) {
  const parent = path.join(REPO_ROOT, "build", "sandbox-it");
  fs.mkdirSync(parent, { recursive: true });
  const base = fs.realpathSync(fs.mkdtempSync(path.join(parent, "ws-")));
  ctx.defer(() => fs.rmSync(base, { recursive: true, force: true }));
  fs.mkdirSync(path.join(base, "proj"));
  return base;
}

async function start(ctx, { script, extraYaml = "", clientCapabilities, mode }) {
  const marker = `CREDENTIALS-MARKER-${process.pid}-${Date.now()}`;
  const fake = await ctx.fakeModel([]);
  const base = outsideTmp(ctx);
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url, extraYaml });
  fs.writeFileSync(path.join(home.configDir, "credentials.yaml"), `# ${marker}\nproviders: {}\n`, { mode: 0o600 });
  fake.push(script(home));
  const h = await ctx.agent({ env: home.env, cwd: path.join(base, "proj"), permission: "allow_once", clientCapabilities });
  await h.initialize();
  const { sessionId } = await h.newSession(path.join(base, "proj"));
  await h.setMode(sessionId, mode);
  assert.equal((await h.prompt(sessionId, "run them")).stopReason, "end_turn");
  return { fake, base, home, h, marker };
}

const threeCommands = (home) => [
  bash("call_cat", `cat ${path.join(home.configDir, "credentials.yaml")}`),
  bash("call_out", "echo x > ../outside"),
  bash("call_in", "echo x > inside.txt"),
  { text: "done" },
];

for (const [label, clientCapabilities] of [["in the editor's terminal", DEFAULT_CLIENT_CAPABILITIES], ["locally (no terminal capability)", NO_TERMINAL]]) {
  scenario(`Accept edits, ${label}: a sandboxed command cannot read the credentials file nor write outside; inside it can`, async (ctx) => {
    const { fake, base, h, marker } = await start(ctx, { script: threeCommands, clientCapabilities, mode: "accept_edits" });
    const promise = `in Accept edits a command ${label} runs in the sandbox`;

    const cat = toolResultText(fake.requests[1], "call_cat");
    assert.match(cat, /Exit code: 1/, `${promise}: cat ran and failed (${cat})`);
    assert.match(cat, /Permission denied/, `${promise}: the credentials file cannot be read (${cat})`);
    assert.doesNotMatch(JSON.stringify(fake.requests.map((r) => r.body)), new RegExp(marker), `${promise}: the credentials never reach the model`);

    const out = toolResultText(fake.requests[2], "call_out");
    assert.match(out, /Permission denied/, `${promise}: a write outside the session's folder is denied (${out})`);
    assert.ok(!fs.existsSync(path.join(base, "outside")), `${promise}: no file was created outside`);

    const inside = toolResultText(fake.requests[3], "call_in");
    assert.match(inside, /Exit code: 0/, `${promise}: a write inside works (${inside})`);
    assert.equal(fs.readFileSync(path.join(base, "proj", "inside.txt"), "utf8"), "x\n");

    const terminals = h.requestsOf("terminal/create").map((r) => r.params);
    if (clientCapabilities.terminal) {
      assert.equal(terminals.length, 3, "every command ran in the editor's terminal");
      for (const t of terminals) {
        assert.equal(t.command, fs.realpathSync(agentBinary()), "the editor runs the sandbox helper: this openvaala");
        assert.equal(t.args[0], "sandbox");
        assert.deepEqual(t.args.slice(-3, -1), ["bash", "-c"]);
      }
    } else {
      assert.equal(terminals.length, 0);
    }
    h.assertSchemaClean();
  });
}

for (const [label, extraYaml, mode] of [["'sandbox: off' in config.yaml", "sandbox: off\n", "accept_edits"], ["Full auto", "", "full_auto"]]) {
  scenario(`${label}: commands run unconfined, in the editor's terminal and locally`, async (ctx) => {
    for (const clientCapabilities of [DEFAULT_CLIENT_CAPABILITIES, NO_TERMINAL]) {
      const { fake, base, h, marker } = await start(ctx, { script: threeCommands, extraYaml, clientCapabilities, mode });
      const where = clientCapabilities.terminal ? "in the editor's terminal" : "locally";
      const promise = `with ${label} a command ${where} is not sandboxed`;
      assert.match(toolResultText(fake.requests[1], "call_cat"), new RegExp(marker), `${promise}: it reads what the user can`);
      assert.match(toolResultText(fake.requests[2], "call_out"), /Exit code: 0/, promise);
      assert.equal(fs.readFileSync(path.join(base, "outside"), "utf8"), "x\n", `${promise}: it writes outside`);
      for (const t of h.requestsOf("terminal/create")) assert.equal(t.params.command, "bash", `${promise}: the editor runs bash itself`);
      h.assertSchemaClean();
    }
  }, { timeout: 60000 });
}

scenario("config check says whether commands run in the sandbox", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const check = () => spawnSync(agentBinary(), ["config", "check"], { env: agentEnv(home.env), encoding: "utf8" }).stdout;
  assert.match(check(), /^Sandbox: on in every mode but Full auto \(Landlock ABI \d+\)/m);
  fs.writeFileSync(home.configPath, "sandbox: off\n");
  assert.match(check(), /^Sandbox: off: commands on local run unconfined/m);
});
