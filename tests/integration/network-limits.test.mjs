// The limits of `openvaala acp --listen`: connections (--max-connections), sessions per
// connection (--max-sessions), the message size (as on stdio) and the idle timeout of a
// Streamable HTTP connection without a stream (--idle-timeout). Each refusal is a clear HTTP
// status, close code or JSON-RPC error, and the server keeps serving the others.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import http from "node:http";
import { agentBinary, agentBinaryExists, sleep, waitUntil, withTimeout } from "./harness.mjs";
import { cleanupNetwork, connect, setup, startServer, upgrade, upgradeStatus } from "./network-harness.mjs";
import { MiniWebSocket } from "./mini-websocket.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
after(cleanupNetwork);

const MAX_MESSAGE = 256 * 1024 * 1024;
const jsonHeaders = { "Content-Type": "application/json" };
const initialize = (id = 1) => ({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });

async function promptWorks(c, ws, label) {
  const { sessionId } = await c.newSession(ws);
  assert.equal((await c.prompt(sessionId, "hi")).stopReason, "end_turn", label);
}

test("--max-connections 2: a third WebSocket or HTTP connection is refused 503; the two go on; a freed slot is taken again", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "one" }, { text: "two" }, { text: "three" }]);
  const server = await startServer({ env: home.env, cwd: ws, args: ["--max-connections", "2"] });
  const a = connect(server.url);
  const b = connect(server.httpUrl);
  await a.initialize();
  await b.initialize();
  const refused = await upgrade(server.url);
  assert.equal(refused.status, 503, "a third WebSocket upgrade");
  assert.match(refused.body, /too many ACP connections \(--max-connections 2\)/);
  const r = await fetch(server.httpUrl, { method: "POST", headers: jsonHeaders, body: JSON.stringify(initialize()) });
  assert.equal(r.status, 503, "a third Streamable HTTP initialize");
  assert.match(await r.text(), /--max-connections 2/);
  await promptWorks(a, ws, "the first connection still works");
  await promptWorks(b, ws, "the second connection still works");
  a.close();
  await waitUntil(async () => (await upgradeStatus(server.url)) === 101, { timeout: 5000, label: "the closed connection's slot freed" });
  await sleep(200);  // the probe's own slot is given back when its socket closes
  const c = connect(server.url);
  await c.initialize();
  await promptWorks(c, ws, "a new connection in the freed slot");
  c.assertSchemaClean();
});

test("--max-sessions 2: a third session on a connection is a JSON-RPC error; after session/close one more opens; other connections are not limited by it", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "still served" }]);
  const server = await startServer({ env: home.env, cwd: ws, args: ["--max-sessions", "2"] });
  const a = connect(server.url);
  await a.initialize();
  const s1 = (await a.newSession(ws)).sessionId;
  await a.newSession(ws);
  await assert.rejects(a.newSession(ws), (e) => {
    assert.equal(e.code, -32000);
    assert.match(e.message, /Too many sessions on this connection \(--max-sessions 2\)/);
    return true;
  });
  const b = connect(server.httpUrl);
  await b.initialize();
  await b.newSession(ws);
  await b.newSession(ws);
  await a.call("session/close", { sessionId: s1 });
  const s3 = (await a.newSession(ws)).sessionId;
  assert.equal((await a.prompt(s3, "hi")).stopReason, "end_turn");
  a.assertSchemaClean();
  b.assertSchemaClean();
});

test("message size as on stdio: an HTTP POST over 256 MiB is 413, a WebSocket message over it closes with 1009; the server goes on", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "fine" }]);
  const server = await startServer({ env: home.env, cwd: ws });
  const u = new URL(server.httpUrl);
  // Refused from its Content-Length, before the body is read.
  const status = await new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST",
      headers: { ...jsonHeaders, "Content-Length": String(MAX_MESSAGE + 1) } });
    req.on("response", (res) => { res.resume(); resolve(res.statusCode); });
    req.on("error", reject);
    req.write("{");
  });
  assert.equal(status, 413);
  // A WebSocket frame announcing more than the limit: the server closes with 1009 (too big).
  const sock = new MiniWebSocket(server.url);
  await new Promise((resolve, reject) => { sock.addEventListener("open", resolve); sock.addEventListener("error", reject); });
  const closed = new Promise((resolve) => sock.addEventListener("close", (e) => resolve(e.code)));
  const head = Buffer.alloc(14);
  head[0] = 0x81;  // FIN, text
  head[1] = 0x80 | 127;
  head.writeBigUInt64BE(BigInt(MAX_MESSAGE + 1), 2);
  crypto.randomBytes(4).copy(head, 10);
  sock.socket.write(Buffer.concat([head, Buffer.alloc(1024)]));
  assert.equal(await withTimeout(closed, 10000, "close after a too-big message"), 1009);
  const c = connect(server.url);
  await c.initialize();
  await promptWorks(c, ws, "served after the refusals");
});

test("--idle-timeout 1: a Streamable HTTP connection with no stream and no request ends (404); one with its event stream open lives on", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([{ text: "alive" }]);
  const server = await startServer({ env: home.env, cwd: ws, args: ["--idle-timeout", "1"] });
  const r = await fetch(server.httpUrl, { method: "POST", headers: jsonHeaders, body: JSON.stringify(initialize()) });
  assert.equal(r.status, 200);
  const dropped = r.headers.get("acp-connection-id");
  const kept = connect(server.httpUrl);  // the SDK's client holds the connection's event stream
  await kept.initialize();
  await sleep(2500);
  const later = await fetch(server.httpUrl, { method: "POST", headers: { ...jsonHeaders, "Acp-Connection-Id": dropped },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }) });
  assert.equal(later.status, 404, "the idle connection was ended");
  await promptWorks(kept, ws, "the connection with an open stream lives on");
  kept.assertSchemaClean();
});
