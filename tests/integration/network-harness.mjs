// The harness of the `openvaala acp --listen` tests (network*.test.mjs): a server started on
// 127.0.0.1, an ACP SDK client over its WebSocket or Streamable HTTP client transport with every
// agent message schema-checked, raw upgrade requests, token files and a TLS certificate.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { Agent, fetch as undiciFetch } from "undici";
import {
  agentBinary, agentEnv, makeConfigHome, makeWorkspace, removeTempDirs, schemaValidator, startFakeModel, waitUntil, withTimeout,
} from "./harness.mjs";
import { MiniWebSocket } from "./mini-websocket.mjs";

const cleanups = [];
/** Pass to node:test's after(): stops the servers and clients the file started. */
export async function cleanupNetwork() {
  for (const c of cleanups.reverse()) await c();
  cleanups.length = 0;
  removeTempDirs();
}

/** Starts `openvaala acp --listen 127.0.0.1:0 ...`; resolves once it prints its address. */
export async function startServer({ env = {}, args = [], listen = "127.0.0.1:0", cwd = process.cwd() } = {}) {
  const child = spawn(agentBinary(), ["acp", "--listen", listen, ...args], {
    cwd, env: agentEnv(env), stdio: ["ignore", "pipe", "pipe"], detached: true,
  });
  let stderr = "";
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve) => {
    child.stderr.on("data", (d) => {
      stderr += d.toString("utf8");
      if (process.env.OPENVAALA_TEST_STDERR) process.stderr.write(d);
      const m = /listening on (wss?:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    exited.then(() => resolve(null));
  });
  const wsUrl = await withTimeout(url, 10000, "server start");
  const server = {
    child, exited, get stderr() { return stderr; },
    url: wsUrl,
    httpUrl: wsUrl?.replace(/^ws/, "http"),
    port: wsUrl ? Number(new URL(wsUrl).port) : 0,
    async stop() {
      try { process.kill(-child.pid, "SIGKILL"); } catch { /* gone */ }
      await exited;
    },
  };
  cleanups.push(() => server.stop());
  return server;
}

/** An SDK client over the SDK's WebSocket (ws://) or Streamable HTTP (http://) client transport;
 *  agent messages are schema-checked. `onRequest(ctx)` answers the agent's other requests
 *  (mcp/message, ...); without it they are "method not found". */
export function connect(url, { token, permission = "allow_once", onPermission, onRequest, ca, protocols, headers: extra = {}, WebSocket = MiniWebSocket } = {}) {
  const headers = { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...extra };
  const raw = url.startsWith("ws") ? createWebSocketStream(url, { WebSocket: trusting(WebSocket, ca), headers, protocols })
    : createHttpStream(url, { headers, fetch: ca ? fetchTrusting(ca) : undefined });
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
    .onRequest("*", (ctx) => {
      if (onRequest) return onRequest(ctx);
      throw new acp.RequestError(-32601, `Method not found: ${ctx.method}`);
    });
  const connection = app.connect({ readable, writable });
  const agent = connection.agent;
  // Calls still pending when the test closes the connection end then (the SDK leaves them
  // pending): their timers must not keep the test file alive for the rest of their timeout.
  const pending = new Set();
  const call = (method, params, timeout = 15000) => {
    let end;
    const closed = new Promise((_, reject) => { end = reject; });
    pending.add(end);
    return withTimeout(Promise.race([agent.request(method, params), closed]), timeout, method).finally(() => pending.delete(end));
  };
  const c = {
    connection, updates, permissionRequests, schemaErrors, call,
    initialize: () => call("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "network-tests", version: "0.0.0" },
    }),
    newSession: (cwd) => call("session/new", { cwd, mcpServers: [] }),
    prompt: (sessionId, text, timeout = 30000) => call("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, timeout),
    textOf: (sessionId) => updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
      .map((u) => u.update.content?.text ?? "").join(""),
    assertSchemaClean: () => assert.deepEqual(schemaErrors, [], "agent messages violate the ACP schema"),
    close: () => {
      for (const end of pending) end(new Error("the test closed the connection"));
      pending.clear();
      try { connection.close(); } catch { /* closed */ }
    },
  };
  cleanups.push(async () => c.close());
  return c;
}

/** A raw upgrade request; resolves with { status (101 when upgraded), headers }. */
export function upgrade(url, headers = {}, { ca } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = (u.protocol === "wss:" ? https : http).request({
      host: u.hostname, port: u.port, path: u.pathname, ca,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", ...headers },
    });
    req.on("upgrade", (res, socket) => { socket.destroy(); resolve({ status: 101, headers: res.headers }); });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (d) => { body += d; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The status of a raw upgrade request (101 when upgraded). */
export async function upgradeStatus(url, headers = {}, options = {}) {
  return (await upgrade(url, headers, options)).status;
}

export async function setup(script, files = {}) {
  const fake = await startFakeModel({ script });
  cleanups.push(() => fake.close());
  const home = makeConfigHome({ modelUrl: fake.url });
  const ws = makeWorkspace(files);
  return { fake, home, ws };
}

/** The turn_end records of a session's journal, in order ([] while there is none). */
export function journalTurnEnds(home, sessionId) {
  const file = path.join(home.dataDir, "sessions", `${sessionId}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n").filter(Boolean)
    .map((line) => { try { return JSON.parse(line); } catch { return null; } })
    .filter((r) => r?.type === "turn_end");
}

/** Waits until the session's journal has a turn_end record; resolves with them all. */
export function waitForTurnEnd(home, sessionId, timeout = 10000) {
  return waitUntil(() => { const ends = journalTurnEnds(home, sessionId); return ends.length > 0 && ends; },
    { timeout, label: `the end of a turn in session ${sessionId}'s journal` });
}

export function writeToken(dir, token, mode = 0o600) {
  const file = path.join(dir, "token");
  fs.writeFileSync(file, `  ${token}\n`);
  fs.chmodSync(file, mode);
  return file;
}

/** Runs `openvaala acp ARGS` that should refuse to start, to its exit: { code, stderr }. One that
 *  starts listening instead is stopped at once and reported as `code: "listening"` (never left
 *  running); one still running after `timeout` ms is killed: code null. */
export function runAcp(home, args, { timeout = 10000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(agentBinary(), ["acp", ...args], { env: agentEnv(home.env), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let listening = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
    child.stderr.on("data", (d) => {
      stderr += d;
      if (!listening && /listening on /.test(stderr)) {
        listening = true;
        child.kill("SIGKILL");
      }
    });
    child.once("exit", (code) => { clearTimeout(timer); resolve({ code: listening ? "listening" : code, stderr }); });
  });
}

/** `WebSocket` trusting the PEM certificate `ca` (wss:// to a self-signed server). */
function trusting(WebSocket, ca) {
  if (!ca) return WebSocket;
  return class extends WebSocket {
    constructor(url, protocols, options = {}) { super(url, protocols, { ...options, tls: { ...options.tls, ca } }); }
  };
}

/** A fetch trusting the PEM certificate `ca` (undici's own fetch with an Agent: Node's global
 *  fetch takes no CA but NODE_EXTRA_CA_CERTS, read once at start-up). */
export function fetchTrusting(ca) {
  const dispatcher = new Agent({ connect: { ca } });
  cleanups.push(() => dispatcher.close());
  return (url, init = {}) => undiciFetch(url, { ...init, dispatcher });
}

/** A self-signed certificate for 127.0.0.1 (and localhost) made with openssl in `dir`:
 *  { cert, key } paths and the certificate's PEM text. */
export function selfSignedCertificate(dir, name = "server") {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert], { stdio: "ignore" });
  return { cert, key, pem: fs.readFileSync(cert, "utf8") };
}
