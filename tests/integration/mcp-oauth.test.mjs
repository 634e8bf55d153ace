// OAuth sign-in to a remote MCP server (the MCP authorization spec), against an OAuth-protected
// streamable HTTP server made of @modelcontextprotocol/sdk's auth router, its demo in-memory
// provider and requireBearerAuth (tests/fixtures/mcp/oauth-server.mjs). The test plays the user:
// it follows the authorization URL with an HTTP client (the demo provider approves at once and
// redirects to our loopback listener). Covered: discovery from the 401, dynamic client
// registration, PKCE S256 with the `resource` parameter, `openvaala mcp login/list/logout`, the
// sign-in link shown in the editor while the turn waits, refresh before expiry and after a 401,
// a revoked sign-in leading back to sign-in, a required server that needs sign-in failing the
// turn, tokens 0600 and never in the logs or the journal.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_CLIENT_CAPABILITIES, scenario, agentBinary, agentEnv, expectRpcError, toolCallsById, toolNames, waitUntil, writeFiles, toolResultText } from "./harness.mjs";

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp/oauth-server.mjs");

/** The fixture server; `ttl` is the access token lifetime in seconds. */
async function startOAuthServer(ctx, { ttl = 3600 } = {}) {
  const child = spawn(process.execPath, [FIXTURE, "--ttl", String(ttl)], { stdio: ["ignore", "pipe", "pipe"] });
  ctx.defer(() => child.kill("SIGKILL"));
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  await waitUntil(() => out.includes("\n"), { timeout: 10000, label: `the OAuth fixture to start (stderr: ${err})` });
  const { url, base } = JSON.parse(out.split("\n")[0]);
  return {
    url,
    base,
    stats: async () => (await fetch(`${base}/test/stats`)).json(),
    revokeAll: () => fetch(`${base}/test/revoke-all`, { method: "POST" }),
    expireAll: () => fetch(`${base}/test/expire-all`, { method: "POST" }),
  };
}

function serverYaml(url, extra = "") {
  return `id: remote\ntype: http\nurl: ${url}\n${extra}`;
}

/** Plays the user: opens the authorization URL, follows its redirect to the loopback listener. */
async function approve(authUrl) {
  const r = await fetch(authUrl, { redirect: "manual" });
  assert.equal(r.status, 302, `the authorization server redirects back (HTTP ${r.status}: ${await r.text()})`);
  const location = r.headers.get("location");
  assert.match(location, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/, "the redirect goes to the loopback listener");
  const back = await fetch(location);
  assert.equal(back.status, 200, "the listener answers the browser");
  assert.match(await back.text(), /Signed in/);
}

/** Plays a user who says no: the redirect carries error=access_denied. */
async function deny(authUrl) {
  const u = new URL(authUrl);
  const redirect = new URL(u.searchParams.get("redirect_uri"));
  redirect.searchParams.set("error", "access_denied");
  redirect.searchParams.set("state", u.searchParams.get("state"));
  const r = await fetch(redirect);
  assert.equal(r.status, 200);
}

function cli(home, args, opts = {}) {
  return spawnSync(agentBinary(), args, { env: agentEnv(home.env), encoding: "utf8", timeout: 30000, cwd: home.root, ...opts });
}

/** `openvaala mcp login remote`, approving the link it prints. */
async function cliLogin(home) {
  const child = spawn(agentBinary(), ["mcp", "login", "remote"], { env: agentEnv(home.env), cwd: home.root, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  await waitUntil(() => /https?:\/\/\S+authorize\S*/.test(err), { timeout: 15000, label: `mcp login to print the link (stderr: ${err})` });
  const link = err.match(/https?:\/\/\S+authorize\S*/)[0];
  await approve(link);
  const code = await exited;
  return { code, out, err, link };
}

function tokensFile(home) {
  return path.join(home.configDir, "mcp_tokens.json");
}

function storedTokens(home) {
  return JSON.parse(fs.readFileSync(tokensFile(home), "utf8")).servers.remote;
}

/** Every file under `dir`, concatenated (journals, logs). */
function allText(dir) {
  let s = "";
  if (!fs.existsSync(dir)) return s;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) s += fs.readFileSync(path.join(e.parentPath ?? e.path, e.name), "utf8");
  }
  return s;
}

function assertNoSecrets(texts, home) {
  const t = storedTokens(home);
  for (const secret of [t.access_token, t.refresh_token].filter(Boolean))
    for (const [where, text] of Object.entries(texts)) assert.ok(!text.includes(secret), `a token appears in ${where}`);
}

const whoami = (id = "call_who") => [
  { toolCalls: [{ id, name: "mcp__remote__whoami", arguments: {} }] },
  { text: "Done." },
];
const WHOAMI_SCRIPT = whoami();

scenario("mcp login/list/logout: discovery from the 401, dynamic registration, PKCE S256 with resource; tokens 0600", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const home = ctx.configHome({ provider: null });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });

  let list = cli(home, ["mcp", "list"]);
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^remote {2}http {2}auth: needs sign-in {2}connection: needs sign-in/m, "before sign-in: " + list.stdout);
  assert.match(list.stdout, /openvaala mcp login remote/, "the connection state says how to sign in");

  const login = await cliLogin(home);
  assert.equal(login.code, 0, `mcp login exits 0: ${login.err}`);
  assert.match(login.out, /^Signed in to the MCP server remote/m);
  const link = new URL(login.link);
  assert.equal(link.searchParams.get("code_challenge_method"), "S256", "PKCE with S256");
  assert.equal(link.searchParams.get("resource"), srv.url, "the resource parameter (RFC 8707) names the MCP server");
  const stats = await srv.stats();
  assert.equal(stats.registrations, 1, "one dynamic client registration");
  assert.equal(stats.grants.authorization_code, 1, "one code exchanged (the server checked the PKCE verifier)");
  assert.equal(stats.authorizations[0].resource, srv.url);

  assert.equal(fs.statSync(tokensFile(home)).mode & 0o777, 0o600, "the token file is private");
  const t = storedTokens(home);
  assert.ok(t.access_token && t.refresh_token, "access and refresh token stored");
  assertNoSecrets({ "login stdout": login.out, "login stderr": login.err }, home);

  list = cli(home, ["mcp", "list"]);
  assert.match(list.stdout, /^remote {2}http {2}auth: signed-in {2}connection: connected \(1 tools\)$/m, list.stdout);
  assertNoSecrets({ "list stdout": list.stdout, "list stderr": list.stderr }, home);

  const out = cli(home, ["mcp", "logout", "remote"]);
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /^Signed out of the MCP server remote$/m);
  assert.ok((await srv.stats()).revocations >= 1, "logout revokes the tokens at the server");
  assert.equal(JSON.parse(fs.readFileSync(tokensFile(home), "utf8")).servers.remote, undefined, "logout forgets the tokens");
  assert.match(cli(home, ["mcp", "logout", "remote"]).stdout, /was not signed in/);
  list = cli(home, ["mcp", "list", "--no-connect"]);
  assert.match(list.stdout, /^remote {2}http {2}auth: none {2}connection: not connected$/m, list.stdout);

  const bad = cli(home, ["mcp", "login", "nope"]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /no MCP server 'nope'/);
}, { timeout: 90000 });

scenario("a prompt signs in from the editor: the link as a message, a pending tool call, the turn goes on", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const fake = await ctx.fakeModel(WHOAMI_SCRIPT);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });
  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_LOG: "debug", OPENVAALA_LOG_STDERR: "debug" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  const turn = h.prompt(sessionId, "Who am I on the remote server?", { timeout: 60000 });
  await waitUntil(() => /Open this link: (\S+)/.test(h.textOf(sessionId)), { timeout: 20000, label: "the sign-in link as an agent message" });
  const link = h.textOf(sessionId).match(/Open this link: (\S+)/)[1];
  const calls = [...toolCallsById(h, sessionId).entries()].filter(([id]) => id.startsWith("mcp_sign_in_remote"));
  assert.equal(calls.length, 1, "one sign-in tool call");
  assert.equal(calls[0][1][0].status, "pending", "pending while the user signs in");
  assert.equal(fake.requests.length, 0, "the turn waits for the sign-in");
  await approve(link);
  const res = await turn;
  assert.equal(res.stopReason, "end_turn");
  const ups = toolCallsById(h, sessionId).get(calls[0][0]);
  assert.equal(ups.at(-1).status, "completed", "the sign-in tool call completes when the redirect arrives");
  assert.match(toolResultText(fake.requests[1], "call_who"), /signed in as client/, "the server's tool ran with the new token");
  assert.equal(fs.statSync(tokensFile(home)).mode & 0o777, 0o600);
  assertNoSecrets({ "agent stderr": h.stderr, "data dir (journal, logs)": allText(home.dataDir) }, home);
  h.assertSchemaClean();
}, { timeout: 90000 });

/** An agent whose editor advertises URL-mode elicitation and answers sign-in links with `answer(params)`. */
async function urlElicitingAgent(ctx, srv, script, answer) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });
  const h = await ctx.agent({
    env: home.env,
    cwd: ws,
    clientCapabilities: { ...DEFAULT_CLIENT_CAPABILITIES, elicitation: { url: {} } },
    onRequest: async (method, params) => {
      if (method !== "elicitation/create") throw new Error(`unexpected client request ${method}`);
      return answer(params);
    },
  });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  return { fake, home, h, sessionId };
}

scenario("an editor with URL elicitation gets the sign-in link as elicitation/create (url) on the sign-in tool call, then elicitation/complete", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const opened = [];
  // The editor opens the browser and answers accept at once; the user signs in afterwards.
  const { fake, home, h, sessionId } = await urlElicitingAgent(ctx, srv, WHOAMI_SCRIPT, (params) => {
    setImmediate(() => opened.push(approve(params.url)));
    return { action: "accept" };
  });
  const res = await h.prompt(sessionId, "Who am I on the remote server?", { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn");
  await Promise.all(opened);
  const asked = h.requestsOf("elicitation/create");
  assert.equal(asked.length, 1, "promise: one URL question for the sign-in");
  const q = asked[0].params;
  assert.equal(q.mode, "url");
  assert.equal(q.sessionId, sessionId);
  assert.match(q.url, /\/authorize\?.*code_challenge_method=S256/, `the authorization URL: ${q.url}`);
  assert.match(q.message, /remote/, "the question names the server");
  const [callId, ups] = [...toolCallsById(h, sessionId).entries()].find(([id]) => id.startsWith("mcp_sign_in_remote"));
  assert.equal(q.toolCallId, callId, "scoped to the sign-in tool call");
  assert.equal(ups.at(-1).status, "completed");
  const done = h.wire.fromAgent.filter((m) => m.method === "elicitation/complete").map((m) => m.params);
  assert.deepEqual(done, [{ elicitationId: q.elicitationId }], "promise: elicitation/complete names the sign-in question once signed in");
  assert.doesNotMatch(h.textOf(sessionId), /Open this link/, "the link is not repeated as chat text");
  assert.match(toolResultText(fake.requests[1], "call_who"), /signed in as client/, "the server's tool ran with the new token");
  assertNoSecrets({ "agent stderr": h.stderr, "data dir (journal, logs)": allText(home.dataDir) }, home);
  h.assertSchemaClean();
}, { timeout: 90000 });

scenario("declining the URL sign-in question abandons the sign-in at once: the turn goes on without the server", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const { fake, h, sessionId } = await urlElicitingAgent(ctx, srv, [{ text: "Without the remote server." }],
    () => ({ action: "decline" }));
  const res = await h.prompt(sessionId, "Who am I on the remote server?", { timeout: 30000 });
  assert.equal(res.stopReason, "end_turn", "promise: a declined sign-in never leaves the turn waiting for a redirect");
  assert.equal(h.requestsOf("elicitation/create").length, 1);
  const [, ups] = [...toolCallsById(h, sessionId).entries()].find(([id]) => id.startsWith("mcp_sign_in_remote"));
  assert.equal(ups.at(-1).status, "failed", "the sign-in tool call fails");
  assert.deepEqual(h.wire.fromAgent.filter((m) => m.method === "elicitation/complete"), [], "nothing completed");
  assert.equal(fake.requests.length, 1, "the model was asked");
  assert.deepEqual(toolNames(fake.requests[0]).filter((n) => n.startsWith("mcp__remote__")), [], "without the server's tools");
  assert.equal((await srv.stats()).grants.authorization_code ?? 0, 0, "no sign-in happened");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("an http server the editor passes in session/new signs in the same way; one sent with the editor's own Authorization header is left to the editor", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const fake = await ctx.fakeModel([...WHOAMI_SCRIPT, { text: "Nothing from the second server." }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws, { mcpServers: [{ type: "http", name: "remote", url: srv.url, headers: [] }] });
  await h.setMode(sessionId, "full_auto");
  const turn = h.prompt(sessionId, "Who am I on the remote server?", { timeout: 60000 });
  await waitUntil(() => /Open this link: (\S+)/.test(h.textOf(sessionId)), { timeout: 20000,
    label: "promise: an editor's http server that answers 401 gets the sign-in link like a configured one" });
  await approve(h.textOf(sessionId).match(/Open this link: (\S+)/)[1]);
  assert.equal((await turn).stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[1], "call_who"), /signed in as client/, "the editor's server ran the tool with our token");
  assert.ok(storedTokens(home).access_token, "its tokens are stored under its name");

  // The editor sends its own (here: wrong) credentials: no sign-in of ours, the server just fails.
  const other = await h.newSession(ws, { mcpServers: [{ type: "http", name: "theirs", url: srv.url, headers: [{ name: "Authorization", value: "Bearer editor-token" }] }] });
  assert.equal((await h.prompt(other.sessionId, "hi", { timeout: 60000 })).stopReason, "end_turn");
  assert.doesNotMatch(h.textOf(other.sessionId), /Open this link/, "no sign-in over the editor's own Authorization header");
  assert.deepEqual(toolNames(fake.requests.at(-1)).filter((n) => n.startsWith("mcp__theirs__")), []);
  assertNoSecrets({ "agent stderr": h.stderr, "data dir (journal, logs)": allText(home.dataDir) }, home);
  h.assertSchemaClean();
}, { timeout: 90000 });

scenario("tokens are refreshed before they expire and after a 401; a revoked sign-in asks again", async (ctx) => {
  const srv = await startOAuthServer(ctx, { ttl: 3600 });
  const fake = await ctx.fakeModel([...whoami("call_who1"), ...whoami("call_who2"), ...whoami("call_who3")]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });
  assert.equal((await cliLogin(home)).code, 0);
  const first = storedTokens(home);

  // 1. the server rejects the token (expired there): 401 -> refresh -> the request is sent again
  await srv.expireAll();
  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_LOG: "debug", OPENVAALA_LOG_STDERR: "debug" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  let res = await h.prompt(sessionId, "Who am I?", { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[1], "call_who1"), /signed in as client/);
  assert.equal((await srv.stats()).grants.refresh_token, 1, "one refresh after the 401");
  const second = storedTokens(home);
  assert.notEqual(second.access_token, first.access_token, "the new access token is stored");
  assert.notEqual(second.refresh_token, first.refresh_token, "the rotated refresh token is stored");
  assert.ok(!/Open this link/.test(h.textOf(sessionId)), "no sign-in was needed");

  // 2. revoked at the server: the call fails (its refresh is refused), the next turn asks to
  //    sign in again
  await srv.revokeAll();
  res = await h.prompt(sessionId, "Again?", { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[3], "call_who2"), /needs sign-in/, "the failed call says why");
  const turn = h.prompt(sessionId, "And now?", { timeout: 60000 });
  await waitUntil(() => /Open this link: (\S+)/.test(h.textOf(sessionId)), { timeout: 20000, label: "a new sign-in link after the revocation" });
  await approve(h.textOf(sessionId).match(/Open this link: (\S+)/)[1]);
  res = await turn;
  assert.equal(res.stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[5], "call_who3"), /signed in as client/);
  assertNoSecrets({ "agent stderr": h.stderr, "data dir (journal, logs)": allText(home.dataDir) }, home);
}, { timeout: 120000 });

scenario("an access token about to expire is refreshed before it is sent", async (ctx) => {
  const srv = await startOAuthServer(ctx, { ttl: 30 }); // within the minute we refresh ahead
  const home = ctx.configHome({ provider: null });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });
  assert.equal((await cliLogin(home)).code, 0);
  const list = cli(home, ["mcp", "list"]);
  assert.match(list.stdout, /auth: signed-in {2}connection: connected/, list.stdout);
  const stats = await srv.stats();
  assert.ok(stats.grants.refresh_token >= 1, `refreshed before use: ${JSON.stringify(stats.grants)}`);
}, { timeout: 90000 });

scenario("a required server that needs sign-in fails the turn saying so when the sign-in is refused", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const fake = await ctx.fakeModel([{ text: "should not be asked" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url, "required: true\n") });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const turn = expectRpcError(h.prompt(sessionId, "hi", { timeout: 60000 }), "session/prompt");
  await waitUntil(() => /Open this link: (\S+)/.test(h.textOf(sessionId)), { timeout: 20000, label: "the sign-in link" });
  await deny(h.textOf(sessionId).match(/Open this link: (\S+)/)[1]);
  const e = await turn;
  assert.match(e.message, /required MCP server 'remote'.* needs sign-in/, e.message);
  assert.match(e.message, /access_denied/, "the reason");
  assert.match(e.message, /openvaala mcp login remote/, "how to sign in");
  const call = [...toolCallsById(h, sessionId).entries()].find(([id]) => id.startsWith("mcp_sign_in_remote"));
  assert.equal(call[1].at(-1).status, "failed");
  assert.equal(fake.requests.length, 0, "the model was never called");
  assert.equal(h.exitInfo, null, "the agent keeps running");
}, { timeout: 90000 });

scenario("config check validates oauth: fields", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  writeFiles(home.configDir, {
    "mcp_servers/remote.yaml": serverYaml("http://127.0.0.1:9/mcp", "oauth:\n  client_secret_env: SECRET\n  scope: x\n  callback_port: 99999\n"),
    "mcp_servers/local.yaml": "id: local\ntype: stdio\ncommand: x\noauth:\n  client_id: a\n",
  });
  const r = cli(home, ["config", "check", "--cwd", home.root]);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /remote\.yaml:6: unknown key 'scope' in 'oauth'/);
  assert.match(r.stdout, /remote\.yaml:5: 'client_secret_env' needs 'client_id'/);
  assert.match(r.stdout, /remote\.yaml:7: 'callback_port' must be a port number/);
  assert.match(r.stdout, /local\.yaml:5: 'oauth' is not allowed for a stdio server/);
}, { timeout: 30000 });

/** An HTTP GET on a raw socket to the loopback listener; resolves with the status (0: none). */
function rawGet(port, target) {
  return new Promise((resolve) => {
    const sock = net.connect(port, "127.0.0.1", () => sock.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    let got = "";
    sock.on("data", (d) => (got += d));
    sock.on("error", () => resolve(0));
    sock.on("close", () => resolve(Number(got.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0)));
  });
}

scenario("the sign-in redirect: idle connections hold nothing up, a wrong or missing state gets 400 and the sign-in waits on", async (ctx) => {
  const srv = await startOAuthServer(ctx);
  const fake = await ctx.fakeModel(WHOAMI_SCRIPT);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, { "mcp_servers/remote.yaml": serverYaml(srv.url) });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  const turn = h.prompt(sessionId, "Who am I on the remote server?", { timeout: 60000 });
  await waitUntil(() => /Open this link: (\S+)/.test(h.textOf(sessionId)), { timeout: 20000, label: "the sign-in link" });
  const link = new URL(h.textOf(sessionId).match(/Open this link: (\S+)/)[1]);
  const port = Number(new URL(link.searchParams.get("redirect_uri")).port);
  const state = link.searchParams.get("state");

  // A browser's preconnects, or a local process: connections that never send a request.
  const idle = [];
  for (let i = 0; i < 3; i++) {
    const s = net.connect(port, "127.0.0.1");
    s.on("error", () => {});
    idle.push(s);
  }
  ctx.defer(() => idle.forEach((s) => s.destroy()));
  await new Promise((r) => setTimeout(r, 100));

  // Each idle connection held the listener for its 10 s deadline, one after the other.
  const started = Date.now();
  assert.equal(await rawGet(port, "/callback?code=forged&state=not-the-state"), 400, "a wrong state is refused");
  assert.equal(await rawGet(port, "/callback?code=forged"), 400, "a missing state is refused");
  assert.equal(await rawGet(port, `/callback?error=access_denied&state=${state}x`), 400, "an error with a wrong state is refused");
  const signIn = [...toolCallsById(h, sessionId).entries()].find(([id]) => id.startsWith("mcp_sign_in_remote"));
  assert.equal(signIn[1].at(-1).status, "pending", "the sign-in still waits for the right redirect");
  assert.equal(fake.requests.length, 0, "and so does the turn");

  await approve(link.href);
  const waited = Date.now() - started;
  assert.ok(waited < 8000, `the redirects were served at once beside 3 idle connections (${waited} ms)`);
  assert.equal((await turn).stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[1], "call_who"), /signed in as client/, "signed in with the right redirect's code");
  h.assertSchemaClean();
}, { timeout: 90000 });
