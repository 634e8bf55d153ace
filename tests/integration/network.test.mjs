// `openvaala acp --listen`: ACP over the network, driven by the ACP SDK's own WebSocket client
// transport (createWebSocketStream) with the fake model. Every message the agent sends is checked
// against the ACP schema, as the stdio harness does.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { agentBinaryExists, agentBinary, makeConfigHome, makeWorkspace, toolResultText, withTimeout, sleep } from "./harness.mjs";
import { cleanupNetwork, connect, runAcp, setup, startServer, upgradeStatus, waitForTurnEnd, writeToken } from "./network-harness.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
const PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old line\n+new line\n*** End Patch";
after(cleanupNetwork);

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
  assert.ok(Date.now() - t0 < 2000);
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

test("a connection dropped while a permission prompt waits: it answers cancelled, nothing is edited, the turn goes on to its end (journaled), and the session loads from a new connection", { skip, timeout: 60000 }, async () => {
  const { fake, home, ws } = await setup([
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
  const ends = await waitForTurnEnd(home, sessionId, 10000);
  assert.equal(ends[0].stopReason, "end_turn", "the dropped client's turn goes on to its end");
  assert.equal(fs.readFileSync(path.join(ws, "hello.txt"), "utf8"), "old line\n", "an unanswered permission never allows the edit");
  assert.equal(fake.requests.length, 2);
  assert.match(toolResultText(fake.requests[1], "call_patch"), /Cancelled/, "the model is told the edit was cancelled, not made");
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
