// What the ACP Registry asks of an entry's agent, the way its own scripts ask it
// (agentclientprotocol/registry .github/workflows/client.py and protocol_matrix.py): raw JSON-RPC
// lines, `_meta: {"terminal-auth": true}` in the client capabilities, a fresh HOME with no model.
//  - the auth check wants an auth method of type `agent` or `terminal`;
//  - the daily protocol matrix runs session/new unauthenticated (auth_required is a known answer)
//    and probes session methods with a made-up session id: a result, -32602 or -32002 is an
//    answer, -32601 or silence is not.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scenario, agentBinary, agentEnv, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";

// The registry's initialize, as client.py and protocol_matrix.py send it.
const REGISTRY_INIT = {
  protocolVersion: 1,
  clientInfo: { name: "ACP Registry Protocol Matrix", version: "0.1.0" },
  clientCapabilities: {
    terminal: true,
    fs: { readTextFile: true, writeTextFile: true },
    _meta: { terminal_output: true, "terminal-auth": true },
  },
};
const PROBE_SESSION = "sess_matrix_probe";
// Every session method the matrix probes or an entry's clients use on a session they name.
const PROBED = ["session/load", "session/list", "session/fork", "session/resume", "session/set_model", "session/close", "session/delete"];
const ANSWERS = new Set([-32602, -32002]);  // protocol_matrix.py SUCCESS_STATUSES besides a result

function probeParams(method, sessionId, cwd) {
  if (method === "session/list") return {};
  if (method === "session/set_model") return { sessionId, modelId: "matrix-model" };
  if (method === "session/close" || method === "session/delete") return { sessionId };
  return { sessionId, cwd, mcpServers: [] };
}

function noModelEnv(home) {
  return { ...home.env, OPENVAALA_MODEL: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" };
}

scenario("registry auth check: its initialize (_meta terminal-auth) gets a `terminal` auth method running `openvaala login`, beside check-provider", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: noModelEnv(home), cwd: ws });
  const init = await r.request("initialize", REGISTRY_INIT, 1);
  const methods = init.result?.authMethods ?? [];
  const terminal = methods.find((m) => m.type === "terminal");
  assert.deepEqual(terminal, {
    type: "terminal",
    id: "openvaala-login",
    name: "Log in",
    description: "Store a model provider API key",
    args: ["login"],
  }, `a terminal method for the registry's auth check: ${JSON.stringify(methods)}`);
  assert.ok(methods.some((m) => m.id === "check-provider" && m.type === undefined), "the env-var path stays (type agent by default)");
  r.assertSchemaClean();
});

scenario("registry protocol matrix: session/new without a model is auth_required naming the method; every probed session method answers", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: noModelEnv(home), cwd: ws });
  assert.ok((await r.request("initialize", REGISTRY_INIT, 1)).result);
  const created = await r.request("session/new", { cwd: ws, mcpServers: [] }, 2);
  assert.equal(created.error?.code, -32000, `session/new without a model is auth_required: ${JSON.stringify(created)}`);
  assert.match(created.error.message, /No model is configured/, "it says what is missing");
  assert.match(created.error.message, /'openvaala-login'/, "and names the auth method that fixes it");
  let id = 3;
  for (const method of PROBED) {
    const answer = await r.request(method, probeParams(method, PROBE_SESSION, ws), id++);
    assert.ok("result" in answer || ANSWERS.has(answer.error?.code),
      `${method} on an unknown session answers (a result, -32602 or -32002), got ${JSON.stringify(answer)}`);
  }
  assert.equal(r.exitInfo, null, "still running");
  r.assertSchemaClean();
});

scenario("registry protocol matrix with a model: a real session is listed, forked, resumed, its model set, closed and deleted", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const home = ctx.configHome({ modelUrl: fake.url });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: home.env, cwd: ws });
  assert.ok((await r.request("initialize", REGISTRY_INIT, 1)).result);
  const sessionId = (await r.request("session/new", { cwd: ws, mcpServers: [] }, 2)).result?.sessionId;
  assert.ok(sessionId);
  let id = 3;
  for (const method of ["session/list", "session/fork", "session/set_model", "session/close", "session/load", "session/close", "session/resume", "session/delete"]) {
    const params = method === "session/set_model" ? { sessionId, modelId: "fake/test-model" } : probeParams(method, sessionId, ws);
    const answer = await r.request(method, params, id++);
    assert.ok(answer.result && typeof answer.result === "object" && !Array.isArray(answer.result),
      `${method} on a real session succeeds with an object, got ${JSON.stringify(answer)}`);
  }
  r.assertSchemaClean();
});

scenario("terminal auth end to end: session/new says to log in, the client runs `openvaala login` (the method's args), the same server's next session/new works", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "logged in and answering" }]);
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const env = noModelEnv(home);
  const caps = { ...DEFAULT_CLIENT_CAPABILITIES, auth: { terminal: true } };
  const h = await ctx.agent({ env, cwd: ws, clientCapabilities: caps });
  const init = await h.initialize();
  const method = init.authMethods.find((m) => m.type === "terminal");
  let refused = null;
  try {
    await h.newSession(ws);
  } catch (e) {
    refused = e;
  }
  assert.equal(refused?.code, -32000, `session/new before logging in is auth_required: ${refused?.stack ?? refused}`);
  assert.match(refused.message, new RegExp(`'${method.id}'`), "naming the terminal method");

  // What the client does with a terminal method: the agent's command with the method's args.
  const keyFile = path.join(home.root, "key.txt");
  fs.writeFileSync(keyFile, "sk-terminal-login\n");
  const fd = fs.openSync(keyFile, "r");
  const login = spawnSync(agentBinary(), [...method.args, "--provider", "fake", "--api-type", "openai", "--base-url", `${fake.url}/v1`, "--model", "m"],
    { stdio: [fd, "pipe", "pipe"], env: agentEnv(env), encoding: "utf8", timeout: 10000 });
  fs.closeSync(fd);
  assert.equal(login.status, 0, `openvaala login: ${login.stderr}`);

  const { sessionId } = await h.newSession(ws);
  assert.ok(sessionId, "after the login the same server opens a session (config.yaml read again)");
  assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.equal(h.textOf(sessionId), "logged in and answering");
  assert.equal(fake.requests[0].headers.authorization, "Bearer sk-terminal-login");
  h.assertSchemaClean();
});
