#!/usr/bin/env node
// ACP over the network against stdio, end to end with real processes (run on demand, not in CI):
//   the agent_message_chunk relay of one turn of `--chunks` text deltas from a fast fake model,
//   over stdio (NDJSON pipes), over a WebSocket and over Streamable HTTP (the session's event
//   stream) of one `openvaala acp --listen`; and connection set-up: connect -> initialize
//   response, and -> session/new response (medians of `--runs`), for both network profiles.
// Raw messages (no SDK) so the client is not what is measured.
//
//   node bench/network_bench.mjs [--bin build/openvaala] [--runs 50] [--chunks 50000]
import { spawn } from "node:child_process";
import path from "node:path";
import { REPO_ROOT, agentBinary, agentEnv, makeConfigHome, makeWorkspace, startFakeModel, removeTempDirs } from "../tests/integration/harness.mjs";
import { MiniWebSocket } from "../tests/integration/mini-websocket.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bin = path.resolve(REPO_ROOT, opt("--bin", agentBinary()));
const runs = Number(opt("--runs", 50));
const chunkCount = Number(opt("--chunks", 50000));

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const isChunk = (line) => line.includes('"agent_message_chunk"');

/** A raw JSON-RPC client over `send(text)`; feed it every message text received. */
function rpc(send) {
  const waiters = new Map();
  const onMessage = [];
  let nextId = 1;
  return {
    onMessage,
    receive(text) {
      for (const f of onMessage) f(text);
      if (isChunk(text)) return;
      const msg = JSON.parse(text);
      if (msg.id !== undefined && !msg.method && waiters.has(msg.id)) {
        waiters.get(msg.id)(msg);
        waiters.delete(msg.id);
      }
    },
    request(method, params) {
      const id = nextId++;
      return new Promise((resolve) => {
        waiters.set(id, resolve);
        send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      });
    },
  };
}

function stdioClient(env, cwd) {
  const child = spawn(bin, ["acp"], { env, cwd, stdio: ["pipe", "pipe", "ignore"] });
  const c = rpc((text) => child.stdin.write(text + "\n"));
  let buf = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      c.receive(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  c.close = () => { child.stdin.end(); return new Promise((r) => child.on("exit", r)); };
  return c;
}

async function wsClient(url) {
  const socket = new MiniWebSocket(url);
  const c = rpc((text) => socket.send(text));
  socket.addEventListener("message", (e) => c.receive(e.data));
  await new Promise((resolve, reject) => { socket.addEventListener("open", resolve); socket.addEventListener("error", reject); });
  c.close = () => socket.close();
  return c;
}

/** Streamable HTTP: POST initialize, then the connection's and the session's event streams. */
async function httpClient(url) {
  const json = { "Content-Type": "application/json" };
  let connection = null;
  const streams = [];
  const c = rpc(async (text) => {
    const msg = JSON.parse(text);
    const headers = { ...json, ...(connection ? { "Acp-Connection-Id": connection } : {}), ...(msg.params?.sessionId ? { "Acp-Session-Id": msg.params.sessionId } : {}) };
    const r = await fetch(url, { method: "POST", headers, body: text });
    if (r.status === 200) {
      connection = r.headers.get("acp-connection-id");
      c.receive(await r.text());
    } else await r.arrayBuffer();
  });
  c.openStream = async (sessionId) => {
    const controller = new AbortController();
    streams.push(controller);
    const r = await fetch(url, { headers: { Accept: "text/event-stream", "Acp-Connection-Id": connection, ...(sessionId ? { "Acp-Session-Id": sessionId } : {}) }, signal: controller.signal });
    (async () => {
      const decoder = new TextDecoder();
      let buf = "";
      try {
        for await (const part of r.body) {
          buf += decoder.decode(part, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const event = buf.slice(0, i);
            buf = buf.slice(i + 2);
            for (const line of event.split("\n")) if (line.startsWith("data: ")) c.receive(line.slice(6));
          }
        }
      } catch { /* aborted */ }
    })();
  };
  c.close = async () => {
    for (const s of streams) s.abort();
    await fetch(url, { method: "DELETE", headers: { "Acp-Connection-Id": connection } }).catch(() => {});
  };
  // The connection's event stream opens once the connection exists (after initialize), as the
  // SDK's client does.
  const request = c.request;
  c.request = async (method, params) => {
    const r = await request(method, params);
    if (method === "initialize") await c.openStream();
    return r;
  };
  return c;
}

async function relay(c, fake, ws, before = async () => {}) {
  fake.push({ chunks: Array.from({ length: chunkCount }, (_, i) => `c${i % 10}`) });
  await c.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const { result } = await c.request("session/new", { cwd: ws, mcpServers: [] });
  await before(result.sessionId);
  let chunks = 0, first = 0n;
  c.onMessage.push((text) => {
    if (!isChunk(text)) return;
    if (!chunks) first = process.hrtime.bigint();
    chunks++;
  });
  const t0 = process.hrtime.bigint();
  await c.request("session/prompt", { sessionId: result.sessionId, prompt: [{ type: "text", text: "go" }] });
  // Over HTTP the reply and the chunks travel on different streams: wait for the last chunk.
  while (chunks < chunkCount && ms(t0) < 60000) await new Promise((r) => setTimeout(r, 5));
  const streaming = ms(first);
  await c.close();
  return { chunks, chunks_per_second: Math.round(chunks / (streaming / 1000)), turn_ms: +ms(t0).toFixed(1) };
}

async function setupTimes(connectFn, ws) {
  const init = [], newSession = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const c = await connectFn();
    await c.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    init.push(ms(t0));
    await c.request("session/new", { cwd: ws, mcpServers: [] });
    newSession.push(ms(t0));
    await c.close();
  }
  return { connect_to_initialize_ms_median: +median(init).toFixed(2), connect_to_session_new_ms_median: +median(newSession).toFixed(2) };
}

const fake = await startFakeModel();
const home = makeConfigHome({ modelUrl: fake.url });
const env = agentEnv(home.env);
const ws = makeWorkspace({ "a.txt": "a\n" });

const server = spawn(bin, ["acp", "--listen", "127.0.0.1:0"], { env, cwd: ws, stdio: ["ignore", "ignore", "pipe"] });
const wsUrl = await new Promise((resolve) => {
  let err = "";
  server.stderr.on("data", (d) => {
    err += d;
    const m = /listening on (ws:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
});
const httpUrl = wsUrl.replace(/^ws/, "http");

const out = {
  runs,
  chunks: chunkCount,
  relay_stdio: await relay(stdioClient(env, ws), fake, ws),
  relay_websocket: await relay(await wsClient(wsUrl), fake, ws),
  relay_streamable_http: await (async () => {
    const c = await httpClient(httpUrl);
    return relay(c, fake, ws, (sessionId) => c.openStream(sessionId));
  })(),
  setup_websocket: await setupTimes(() => wsClient(wsUrl), ws),
  setup_streamable_http: await setupTimes(() => httpClient(httpUrl), ws),
};
server.kill("SIGTERM");
await fake.close();
removeTempDirs();
console.log(JSON.stringify(out, null, 2));
