// `openvaala login` (credentials.yaml, 0600) and the ACP auth methods built on it: the agent
// method `check-provider` always, the terminal method `openvaala-login` only for clients that
// send clientCapabilities.auth.terminal.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scenario, agentBinary, agentEnv, expectRpcError, waitUntil, withTimeout, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

const KEY = "sk-login-SECRET-4f9a2c";

function runLogin(home, args, { input = `${KEY}\n`, env = {} } = {}) {
  const e = { ...home.env, ...env };
  delete e.FAKE_MODEL_KEY;
  const r = spawnSync(agentBinary(), ["login", ...args], { input, env: agentEnv(e), encoding: "utf8", timeout: 10000 });
  // A login that refuses its arguments exits before reading stdin; Node 22 then reports EPIPE
  // for the input it could not write, with the exit status still there.
  if (r.error && !(r.error.code === "EPIPE" && r.status !== null)) throw r.error;
  return r;
}

const modeOf = (p) => fs.statSync(p).mode & 0o777;

function agentEnvWithoutKey(home) {
  const env = { ...home.env };
  delete env.FAKE_MODEL_KEY;
  return env;
}

scenario("login stores the key 0600, writes config.yaml, and a prompt works without the env var", async (ctx) => {
  const fake = await ctx.fakeModel([{ chunks: ["hello ", "from the fake model"] }]);
  const home = ctx.configHome({ provider: null }); // empty config dir
  const ws = ctx.workspace({ "a.txt": "x\n" });
  const r = runLogin(home, ["--provider", "fake", "--api-type", "openai", "--base-url", `${fake.url}/v1`, "--model", "m"]);
  assert.equal(r.status, 0, `login failed: ${r.stderr}`);
  assert.match(r.stdout, /Logged in/);
  assert.equal(r.stdout.trim().split("\n").length, 1, "one confirmation line");
  assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), "the key must not be printed");

  const creds = path.join(home.configDir, "credentials.yaml");
  assert.equal(modeOf(creds), 0o600);
  const credsText = fs.readFileSync(creds, "utf8");
  assert.match(credsText, /^providers:\n {2}fake:\n {4}api_key: sk-login-SECRET-4f9a2c\n/m);
  assert.deepEqual(fs.readdirSync(home.configDir).sort(), ["config.yaml", "credentials.yaml"], "no temp files left");

  const config = fs.readFileSync(home.configPath, "utf8");
  assert.match(config, /^model: fake\/m$/m);
  assert.match(config, /^providers:\n {2}fake:\n {4}api_type: openai\n {4}base_url: http:\/\/127\.0\.0\.1:\d+\/v1\n/m);
  assert.ok(!config.includes(KEY), "config.yaml must not hold the key");

  // config check accepts what login wrote
  const check = spawnSync(agentBinary(), ["config", "check", "--cwd", ws], { env: agentEnv(agentEnvWithoutKey(home)), encoding: "utf8" });
  assert.equal(check.status, 0, `config check: ${check.stdout}${check.stderr}`);
  assert.ok(!check.stdout.includes(KEY) && !check.stderr.includes(KEY));

  // a session uses the stored key: no FAKE_MODEL_KEY / OPENAI_API_KEY in the environment
  const h = await ctx.agent({ env: agentEnvWithoutKey(home), cwd: ws });
  await h.initialize();
  assert.deepEqual(await h.request("authenticate", { methodId: "check-provider" }), {});
  const { sessionId } = await h.newSession(ws);
  const res = await h.prompt(sessionId, "hi");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(h.textOf(sessionId), "hello from the fake model");
  assert.equal(fake.requests.length, 1);
  assert.equal(fake.requests[0].headers.authorization, `Bearer ${KEY}`);
  assert.ok(!h.stderr.includes(KEY), "the agent must not log the key");
  h.assertSchemaClean();
});

scenario("login keeps config.yaml's comments and model, fixes a loose credentials.yaml, keeps other keys", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const original =
    "# my settings\n" +
    "model: main/big # the default\n" +
    "providers:\n" +
    "  # the local one\n" +
    "  main:\n" +
    "    api_type: openai\n" +
    "    base_url: http://127.0.0.1:9/v1\n" +
    "max_turn_requests: 7\n";
  fs.writeFileSync(home.configPath, original);
  const creds = path.join(home.configDir, "credentials.yaml");
  fs.writeFileSync(creds, "providers:\n  other:\n    api_key: sk-other\n", { mode: 0o644 });
  fs.chmodSync(creds, 0o644);

  // no --provider: the provider of config.yaml's model
  const r = runLogin(home, []);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /provider 'main'/);
  assert.equal(fs.readFileSync(home.configPath, "utf8"), original, "config.yaml untouched when it has a model");
  assert.equal(modeOf(creds), 0o600);
  const text = fs.readFileSync(creds, "utf8");
  assert.match(text, /other:\n {4}api_key: sk-other/);
  assert.match(text, /main:\n {4}api_key: sk-login-SECRET-4f9a2c/);

  // a new provider for a config without a model: inserted into the existing providers, comments kept
  const noModel =
    "# my settings\n" +
    "providers:\n" +
    "  # the local one\n" +
    "  main:\n" +
    "    api_type: openai\n" +
    "    base_url: http://127.0.0.1:9/v1\n" +
    "max_turn_requests: 7 # keep\n";
  fs.writeFileSync(home.configPath, noModel);
  const r2 = runLogin(home, ["--provider", "claude", "--api-type", "anthropic", "--base-url", "http://127.0.0.1:9", "--model", "sonnet"]);
  assert.equal(r2.status, 0, r2.stderr);
  const after = fs.readFileSync(home.configPath, "utf8");
  for (const line of noModel.split("\n")) assert.ok(after.includes(line), `kept line ${JSON.stringify(line)} in:\n${after}`);
  assert.match(after, /^model: claude\/sonnet$/m);
  assert.match(after, /^ {2}claude:\n {4}api_type: anthropic\n {4}base_url: http:\/\/127\.0\.0\.1:9\n/m);
  const check = spawnSync(agentBinary(), ["config", "check"], { env: agentEnv(home.env), encoding: "utf8" });
  assert.equal(check.status, 0, `config check: ${check.stdout}${check.stderr}`);
});

scenario("login refuses bad input and leaves the files alone", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const empty = runLogin(home, ["--model", "gpt-4.1"], { input: "" });
  assert.equal(empty.status, 1);
  assert.match(empty.stderr, /no API key on stdin/);
  assert.deepEqual(fs.readdirSync(home.configDir), []);

  const badType = runLogin(home, ["--api-type", "gemini"]);
  assert.equal(badType.status, 2);
  assert.match(badType.stderr, /--api-type must be 'openai' or 'anthropic'/);

  fs.writeFileSync(home.configPath, "providers: [unclosed\n");
  const broken = runLogin(home, ["--model", "x"]);
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, /config\.yaml:\d+: invalid YAML/);
  assert.ok(!fs.existsSync(path.join(home.configDir, "credentials.yaml")));
  assert.ok(!broken.stderr.includes(KEY));

  // built-in provider with the official URL: only the model is written
  fs.rmSync(home.configPath);
  const builtin = runLogin(home, ["--api-type", "anthropic", "--model", "claude-x"]);
  assert.equal(builtin.status, 0, builtin.stderr);
  assert.equal(fs.readFileSync(home.configPath, "utf8"), "model: anthropic/claude-x\n");
  assert.match(fs.readFileSync(path.join(home.configDir, "credentials.yaml"), "utf8"), /anthropic:\n {4}api_key: /);
});

scenario("the missing-key error names the variable and openvaala login", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  fs.writeFileSync(home.configPath, "model: anthropic/claude-x\n");
  const ws = ctx.workspace({});
  const h = await ctx.agent({ env: agentEnvWithoutKey(home), cwd: ws });
  await h.initialize();
  const err = await expectRpcError(h.request("authenticate", { methodId: "check-provider" }), "authenticate");
  assert.match(err.message, /\$ANTHROPIC_API_KEY/);
  assert.match(err.message, /openvaala login/);
  h.assertSchemaClean();
});

scenario("initialize advertises the terminal login only when the client sends auth.terminal", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const plain = await ctx.agent({ env: home.env, cwd: ws });
  const r1 = await plain.initialize();
  assert.deepEqual(r1.authMethods.map((m) => m.id), ["check-provider"]);
  assert.ok(r1.authMethods.every((m) => m.type === undefined));
  plain.assertSchemaClean();

  const off = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: { ...DEFAULT_CLIENT_CAPABILITIES, auth: { terminal: false } } });
  assert.deepEqual((await off.initialize()).authMethods.map((m) => m.id), ["check-provider"]);
  off.assertSchemaClean();

  const term = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: { ...DEFAULT_CLIENT_CAPABILITIES, auth: { terminal: true } } });
  const r2 = await term.initialize();
  assert.equal(r2.authMethods.length, 2);
  assert.equal(r2.authMethods[0].id, "check-provider");
  assert.deepEqual(r2.authMethods[1], {
    type: "terminal",
    id: "openvaala-login",
    name: "Log in",
    description: "Store a model provider API key",
    args: ["login"],
  });
  term.assertSchemaClean(); // validated against schema.json (AuthMethod / AuthMethodTerminal)
});

// Interactive mode on a real pseudo-terminal (util-linux `script`): the answers are typed after
// each prompt, and the key is never echoed.
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

scenario("interactive login on a terminal asks for each value and hides the key", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const env = agentEnv(agentEnvWithoutKey(home));
  const cmd = `'${agentBinary()}' login`;
  const child = spawn("script", ["-qfec", cmd, "/dev/null"], { env, stdio: ["pipe", "pipe", "pipe"] });
  ctx.defer(() => child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (d) => (out += d.toString("utf8")));
  child.stderr.on("data", (d) => (out += d.toString("utf8")));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  const answer = async (prompt, text) => {
    await waitUntil(() => out.includes(prompt), { timeout: 5000, label: `prompt ${JSON.stringify(prompt)}; output so far: ${JSON.stringify(out)}` });
    child.stdin.write(text + "\r");
  };
  await answer("Provider API type", "anthropic");
  await answer("Base URL [https://api.anthropic.com]", "");
  await answer("Model name", "claude-test");
  await answer("API key for provider 'anthropic' (input hidden): ", KEY);
  const code = await withTimeout(exited, 5000, "interactive login exit");
  assert.equal(code, 0, out);
  assert.ok(!out.includes(KEY), `the key was echoed:\n${out}`);
  assert.match(out, /Logged in/);
  assert.equal(fs.readFileSync(home.configPath, "utf8"), "model: anthropic/claude-test\n");
  const creds = path.join(home.configDir, "credentials.yaml");
  assert.equal(modeOf(creds), 0o600);
  assert.match(fs.readFileSync(creds, "utf8"), new RegExp(`anthropic:\\n {4}api_key: ${KEY}`));
}, { skip: hasScript ? false : "util-linux `script` is not installed" });
