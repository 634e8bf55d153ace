// `openvaala acp --listen`: ACP over the network, driven by the ACP SDK's own WebSocket client
// transport (createWebSocketStream) with the fake model. Every message the agent sends is checked
// against the ACP schema, as the stdio harness does.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import {
  SLACK, agentBinary, agentBinaryExists, agentEnv, makeConfigHome, makeWorkspace, removeTempDirs, schemaValidator,
  startFakeModel, withTimeout, waitUntil, sleep,
} from "./harness.mjs";
import { MiniWebSocket } from "./mini-websocket.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
const PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old line\n+new line\n*** End Patch";
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
  removeTempDirs();
});

/** Starts `openvaala acp --listen 127.0.0.1:0 ...`; resolves once it prints its address. */
async function startServer({ env = {}, args = [], listen = "127.0.0.1:0", cwd = process.cwd() } = {}) {
  const child = spawn(agentBinary(), ["acp", "--listen", listen, ...args], {
    cwd, env: agentEnv(env), stdio: ["ignore", "pipe", "pipe"], detached: true,
  });
  let stderr = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve) => {
    child.stderr.on("data", (d) => {
      stderr += d.toString("utf8");
      if (process.env.OPENVAALA_TEST_STDERR) process.stderr.write(d);
      const m = /listening on (ws:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    exited.then(() => resolve(null));
  });
  const wsUrl = await withTimeout(url, 10000, "server start");
  const server = {
    child, exited, get stderr() { return stderr; },
    url: wsUrl,
    httpUrl: wsUrl?.replace(/^ws/, "http"),
    async stop() {
      try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ }
      await exited;
    },
  };
  cleanups.push(() => server.stop());
  return server;
}

/** An SDK client over the SDK's WebSocket (ws://) or Streamable HTTP (http://) client transport;
 *  agent messages are schema-checked. */
function connect(url, { token, permission = "allow_once", onPermission } = {}) {
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
  const raw = url.startsWith("ws") ? createWebSocketStream(url, { WebSocket: MiniWebSocket, headers }) : createHttpStream(url, { headers });
  const validator = schemaValidator();
  const outgoing = new Map();
  const schemaErrors = [];
  const updates = [];
  const permissionRequests = [];
  const readable = raw.readable.pipeThrough(new TransformStream({
    transform(msg, controller) {
      for (const p of validator.validateAgentMessage(msg, outgoing)) schemaErrors.push(`${p} in ${JSON.stringify(msg).slice(0, 400)}`);
      controller.enqueue(msg);
    },
  }));
  const writer = raw.writable.getWriter();
  const writable = new WritableStream({
    write(msg) {
      if ("id" in msg && !("result" in msg) && !("error" in msg)) outgoing.set(JSON.stringify(msg.id), msg.method);
      return writer.write(msg);
    },
    close: () => writer.close(),
    abort: (e) => writer.abort(e),
  });
  const app = acp.client({ name: "network-tests" })
    .onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
    .onNotification("*", () => {})
    .onRequest(acp.methods.client.session.requestPermission, async (ctx) => {
      permissionRequests.push(ctx.params);
      if (onPermission) return onPermission(ctx.params);
      const option = ctx.params.options.find((o) => o.kind === permission);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, (ctx) => ({ content: fs.readFileSync(ctx.params.path, "utf8") }))
    .onRequest(acp.methods.client.fs.writeTextFile, (ctx) => {
      fs.writeFileSync(ctx.params.path, ctx.params.content);
      return {};
    })
    .onRequest("*", (ctx) => { throw new acp.RequestError(-32601, `Method not found: ${ctx.method}`); });
  const connection = app.connect({ readable, writable });
  const agent = connection.agent;
  const call = (method, params, timeout = 15000) => withTimeout(agent.request(method, params), timeout, method);
  const c = {
    connection, updates, permissionRequests, schemaErrors, call,
    initialize: () => call("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "network-tests", version: "0.0.0" },
    }),
    newSession: (cwd) => call("session/new", { cwd, mcpServers: [] }),
    prompt: (sessionId, text) => call("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, 30000),
    textOf: (sessionId) => updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
      .map((u) => u.update.content?.text ?? "").join(""),
    assertSchemaClean: () => assert.deepEqual(schemaErrors, [], "agent messages violate the ACP schema"),
    close: () => { try { connection.close(); } catch { /* closed */ } },
  };
  cleanups.push(async () => c.close());
  return c;
}

/** A raw upgrade request; resolves with the HTTP status (101 when upgraded). */
function upgradeStatus(url, headers = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname, port: u.port, path: u.pathname,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", ...headers },
    });
    req.on("upgrade", (res, socket) => { socket.destroy(); resolve(101); });
    req.on("response", (res) => { res.resume(); resolve(res.statusCode); });
    req.on("error", reject);
    req.end();
  });
}

async function setup(script, files = {}) {
  const fake = await startFakeModel({ script });
  cleanups.push(() => fake.close());
  const home = makeConfigHome({ modelUrl: fake.url });
  const ws = makeWorkspace(files);
  return { fake, home, ws };
}

function writeToken(dir, token, mode = 0o600) {
  const file = path.join(dir, "token");
  fs.writeFileSync(file, `  ${token}\n`);
  fs.chmodSync(file, mode);
  return file;
}

test("WebSocket: initialize, session/new, a streamed prompt with a permission round trip and an editor write", { skip, timeout: 60000 }, async () => {
  const { fake, home, ws } = await setup([
    { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
    { chunks: ["Edited ", "hello", ".txt."], chunkDelayMs: 20 },
  ], { "hello.txt": "old line\n" });
  const server = await startServer({ env: home.env, cwd: ws });
  assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+\/acp$/);
  const c = connect(server.url);
  const init = await c.initialize();
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo?.name, "openvaala");
  const { sessionId } = await c.newSession(ws);
  const r = await c.prompt(sessionId, "Fix hello.txt");
  assert.equal(r.stopReason, "end_turn");
  assert.equal(c.permissionRequests.length, 1, "the edit asked the editor, over the WebSocket");
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "new line\n");
  assert.ok(c.textOf(sessionId).includes("Edited hello.txt."), `streamed text: ${c.textOf(sessionId)}`);
  assert.ok(c.updates.filter((u) => u.update.sessionUpdate === "agent_message_chunk").length >= 2, "streamed in chunks");
  assert.equal(fake.requests.length, 2);
  c.assertSchemaClean();
});

test("WebSocket: two connections to one server each see only their own sessions", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([
    { chunks: ["one-a ", "one-b ", "one-c"], chunkDelayMs: 40 },
    { chunks: ["two-a ", "two-b ", "two-c"], chunkDelayMs: 40 },
  ]);
  const server = await startServer({ env: home.env, cwd: ws });
  const a = connect(server.url);
  const b = connect(server.url);
  await Promise.all([a.initialize(), b.initialize()]);
  const sa = (await a.newSession(ws)).sessionId;
  const sb = (await b.newSession(ws)).sessionId;
  const [ra, rb] = await Promise.all([a.prompt(sa, "first"), b.prompt(sb, "second")]);
  assert.equal(ra.stopReason, "end_turn");
  assert.equal(rb.stopReason, "end_turn");
  for (const u of a.updates) assert.equal(u.sessionId, sa, "connection A saw another connection's update");
  for (const u of b.updates) assert.equal(u.sessionId, sb, "connection B saw another connection's update");
  assert.ok(a.textOf(sa).length > 0 && b.textOf(sb).length > 0);
  await assert.rejects(b.prompt(sa, "not yours"), "a connection cannot prompt another connection's live session");
  a.assertSchemaClean();
  b.assertSchemaClean();
});

test("WebSocket: a session made on a dropped connection is loaded, with its history, from a new one", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "remember the walrus" }]);
  const server = await startServer({ env: home.env, cwd: ws });
  const a = connect(server.url);
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  await a.prompt(sessionId, "hello");
  a.close();
  await sleep(200);
  const b = connect(server.url);
  const init = await b.initialize();
  assert.equal(init.agentCapabilities?.loadSession, true);
  await b.call("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.ok(b.textOf(sessionId).includes("remember the walrus"), "the history was replayed to the new connection");
  b.assertSchemaClean();
});

test("bearer token: anything but the exact header is refused with 401, the right one connects", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "authorized answer" }]);
  const token = "s3cret-token-value";
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token)] });
  assert.equal(await upgradeStatus(server.url), 401, "no Authorization header");
  for (const value of [`Bearer ${token}x`, `bearer ${token}`, `Bearer  ${token}`, `Basic ${token}`, "Bearer ", `Bearer ${token.slice(0, -1)}`])
    assert.equal(await upgradeStatus(server.url, { Authorization: value }), 401, `Authorization: ${value}`);
  assert.equal(await upgradeStatus(server.url, { Authorization: `Bearer ${token}` }), 101);
  // The SDK's client without the token cannot initialize.
  const denied = connect(server.url);
  await assert.rejects(denied.initialize());
  const c = connect(server.url, { token });
  await c.initialize();
  const { sessionId } = await c.newSession(ws);
  assert.equal((await c.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.ok(c.textOf(sessionId).includes("authorized answer"));
  c.assertSchemaClean();
});

test("a browser page (a request with Origin) is refused with 403, even with the token", { skip, timeout: 30000 }, async () => {
  const { home, ws } = await setup([]);
  const token = "origin-token";
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token)] });
  const headers = { Authorization: `Bearer ${token}`, Origin: "https://evil.example" };
  assert.equal(await upgradeStatus(server.url, headers), 403, "WebSocket upgrade");
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };
  const r = await fetch(server.httpUrl, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(init) });
  assert.equal(r.status, 403, "Streamable HTTP POST");
});

/** `openvaala acp ARGS` that should refuse to start: its exit status and stderr. One that starts
 * listening instead is stopped at once and reported as `code: "listening"` (never left running). */
function runAcp(home, args) {
  return new Promise((resolve) => {
    const child = spawn(agentBinary(), ["acp", ...args], { env: agentEnv(home.env), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let listening = false;
    child.stderr.on("data", (d) => {
      stderr += d;
      if (!listening && /listening on /.test(stderr)) {
        listening = true;
        child.kill("SIGKILL");
      }
    });
    child.once("exit", (code) => resolve({ code: listening ? "listening" : code, stderr }));
  });
}

test("start-up refusal: a non-loopback address without a token file", { skip, timeout: 30000 }, async () => {
  const home = makeConfigHome({ provider: null });
  const open = await runAcp(home, ["--listen", "0.0.0.0:0"]);
  assert.equal(open.code, 2, `exit status; stderr: ${open.stderr}`);
  assert.match(open.stderr, /--token-file/);
  const bad = await runAcp(home, ["--listen", "nowhere"]);
  assert.equal(bad.code, 2);
});

test("start-up refusal: a token file others can read", { skip, timeout: 30000 }, async () => {
  const home = makeConfigHome({ provider: null });
  const ws = makeWorkspace({});
  const run = (args) => runAcp(home, args);
  const readable = await run(["--listen", "127.0.0.1:0", "--token-file", writeToken(ws, "abc", 0o644)]);
  assert.equal(readable.code, 2);
  assert.match(readable.stderr, /0600/);
});

test("SIGTERM: the server exits with status 0 within 2 s, connections open", { skip, timeout: 30000 }, async () => {
  const { home, ws } = await setup([]);
  const server = await startServer({ env: home.env, cwd: ws });
  const c = connect(server.url);
  await c.initialize();
  await c.newSession(ws);
  const t0 = Date.now();
  process.kill(server.child.pid, "SIGTERM");
  const exit = await withTimeout(server.exited, 2000, "exit after SIGTERM");
  assert.ok(Date.now() - t0 < 2000 * SLACK);
  assert.deepEqual(exit, { code: 0, signal: null });
});

test("Streamable HTTP: the SDK's HTTP client: initialize, session/new, a streamed prompt with a permission round trip", { skip, timeout: 60000 }, async () => {
  const { fake, home, ws } = await setup([
    { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
    { chunks: ["Edited ", "over ", "HTTP."], chunkDelayMs: 20 },
  ], { "hello.txt": "old line\n" });
  const token = "http-token";
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token)] });
  const c = connect(server.httpUrl, { token });
  assert.equal((await c.initialize()).protocolVersion, 1);
  const { sessionId } = await c.newSession(ws);
  assert.equal((await c.prompt(sessionId, "Fix hello.txt")).stopReason, "end_turn");
  assert.equal(c.permissionRequests.length, 1, "the permission request reached the client over the session's event stream");
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "new line\n");
  assert.ok(c.textOf(sessionId).includes("Edited over HTTP."), `streamed text: ${c.textOf(sessionId)}`);
  assert.equal(fake.requests.length, 2);
  c.assertSchemaClean();
});

test("Streamable HTTP on the wire: 200 + Acp-Connection-Id, 202, the event stream, batch 400, DELETE then 404", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([]);
  const token = "wire-token";
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token)] });
  const url = server.httpUrl;
  const auth = { Authorization: `Bearer ${token}` };
  const json = { "Content-Type": "application/json" };
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };
  let r;
  r = await fetch(url, { method: "POST", headers: { ...json, ...auth }, body: JSON.stringify(init) });
  assert.equal(r.status, 200);
  const id = r.headers.get("acp-connection-id");
  assert.ok(id, "Acp-Connection-Id header");
  const initResponse = await r.json();
  assert.equal(initResponse.id, 1);
  assert.equal(initResponse.result.protocolVersion, 1);
  const conn = { ...auth, "Acp-Connection-Id": id };
  // A batch is refused.
  r = await fetch(url, { method: "POST", headers: { ...json, ...conn }, body: JSON.stringify([{ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }]) });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.code, -32600);
  // A later request: 202, its reply on the connection's event stream.
  const events = await fetch(url, { headers: { ...conn, Accept: "text/event-stream" } });
  assert.equal(events.status, 200);
  assert.match(events.headers.get("content-type"), /text\/event-stream/);
  r = await fetch(url, { method: "POST", headers: { ...json, ...conn }, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: ws, mcpServers: [] } }) });
  assert.equal(r.status, 202);
  const reader = events.body.getReader();
  let text = "";
  while (!/\n\n/.test(text.slice(text.indexOf('"id":3')))) {
    const { value, done } = await withTimeout(reader.read(), 10000, "event stream");
    if (done) break;
    text += Buffer.from(value).toString("utf8");
  }
  const reply = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6))).find((m) => m.id === 3);
  assert.ok(reply?.result?.sessionId, `session/new answered on the stream: ${text}`);
  // DELETE: 202, the stream ends within 2 s, the id is unknown from then on.
  r = await fetch(url, { method: "DELETE", headers: conn });
  assert.ok([200, 202, 204].includes(r.status), `DELETE answered ${r.status}`);
  await withTimeout((async () => { for (;;) { const { done } = await reader.read(); if (done) return; } })(), 2000, "event stream end after DELETE");
  assert.equal((await fetch(url, { method: "POST", headers: { ...json, ...conn }, body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/list", params: {} }) })).status, 404);
  assert.equal((await fetch(url, { headers: { ...conn, Accept: "text/event-stream" } })).status, 404);
  assert.equal((await fetch(url, { method: "DELETE", headers: conn })).status, 404);
});

test("a connection dropped while a permission prompt waits: nothing is edited, and the session loads from a new connection", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([
    { toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch: PATCH } }] },
    { text: "The edit was not made." },
  ], { "hello.txt": "old line\n" });
  const server = await startServer({ env: home.env, cwd: ws });
  let asked;
  const askedPromise = new Promise((resolve) => { asked = resolve; });
  const a = connect(server.url, { onPermission: () => { asked(); return new Promise(() => {}); } });
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  a.prompt(sessionId, "Fix hello.txt").catch(() => {});
  await withTimeout(askedPromise, 15000, "permission request");
  a.close();
  await sleep(500);
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "old line\n", "an unanswered permission never allows the edit");
  const b = connect(server.url);
  await b.initialize();
  await b.call("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.ok(b.updates.some((u) => u.sessionId === sessionId && u.update.sessionUpdate === "user_message_chunk"), "history replayed");
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "old line\n");
  b.assertSchemaClean();
});

test("Streamable HTTP: without the exact bearer token POST, GET and DELETE are 401, even with a valid connection id", { skip, timeout: 30000 }, async () => {
  const { home, ws } = await setup([]);
  const token = "wire-token";
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token)] });
  const url = server.httpUrl;
  const json = { "Content-Type": "application/json" };
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };
  // Without the token nothing is created.
  let r = await fetch(url, { method: "POST", headers: json, body: JSON.stringify(init) });
  assert.equal(r.status, 401);
  r = await fetch(url, { method: "POST", headers: { ...json, Authorization: `Bearer ${token}x` }, body: JSON.stringify(init) });
  assert.equal(r.status, 401);
  r = await fetch(url, { method: "POST", headers: { ...json, Authorization: `Bearer ${token}` }, body: JSON.stringify(init) });
  assert.equal(r.status, 200);
  const id = r.headers.get("acp-connection-id");
  // The connection id alone does not let anyone in.
  for (const method of ["GET", "DELETE"]) assert.equal((await fetch(url, { method, headers: { "Acp-Connection-Id": id, Accept: "text/event-stream" } })).status, 401, method);
  assert.equal((await fetch(url, { method: "POST", headers: { ...json, "Acp-Connection-Id": id }, body: "{}" })).status, 401);
});
