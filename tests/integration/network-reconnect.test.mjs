// Sessions outlive their network connections (issue 38 item 3), through the ACP SDK's own client
// transports: a turn running when its connection drops runs to its end and is journaled (a new
// connection's session/load replays it), unless the client cancelled it first; MCP servers
// tunnelled over it end with it; a dropped client's objects are freed; SIGTERM ends running turns
// as cancelled, journaled, and exits 0 within 2 s with no child left. (A permission request
// pending at the drop: network.test.mjs.)
import { test, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import { agentBinary, agentBinaryExists, assertProcessesGone, pgrep, toolResultText, waitUntil, withTimeout } from "./harness.mjs";
import { cleanupNetwork, connect, journalTurnEnds, setup, startServer, waitForTurnEnd } from "./network-harness.mjs";
import { makeTunnelServer } from "../fixtures/mcp/tunnel-server.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
after(cleanupNetwork);

/** A connection's new session with a prompt running, once its first chunk arrived. */
async function promptRunning(url, ws, text) {
  const c = connect(url);
  await c.initialize();
  const { sessionId } = await c.newSession(ws);
  const prompt = c.prompt(sessionId, text, 60000).catch((e) => e);
  await waitUntil(() => c.textOf(sessionId).length > 0, { timeout: 15000, label: "the answer's first chunk" });
  return { c, sessionId, prompt };
}

const story = () => ({ chunks: Array.from({ length: 12 }, (_, i) => `part${i} `).concat(["the-end."]), chunkDelayMs: 150 });

for (const profile of ["WebSocket", "Streamable HTTP"]) {
  test(`${profile}: a turn running when its connection drops runs to its end, journaled; session/load from a new connection replays the answer finished after the drop`, { skip, timeout: 90000 }, async () => {
    const { home, ws } = await setup([story()]);
    const server = await startServer({ env: home.env, cwd: ws });
    const url = profile === "WebSocket" ? server.url : server.httpUrl;
    const { c: a, sessionId } = await promptRunning(url, ws, "tell a long story");
    a.close();
    const ends = await waitForTurnEnd(home, sessionId, 20000);
    assert.equal(ends[0].stopReason, "end_turn", "a dropped client's turn runs to its end: it is not cancelled by the drop");
    assert.ok(!a.textOf(sessionId).includes("the-end."), "set-up: the connection dropped before the answer ended");
    const b = connect(url);
    await b.initialize();
    await b.call("session/load", { sessionId, cwd: ws, mcpServers: [] });
    // Streamable HTTP sends the replay on the session's stream and the reply on the connection's:
    // the server writes the replay first, but two sockets do not promise the client reads it first.
    await waitUntil(() => /part11 the-end\./.test(b.textOf(sessionId)),
      { timeout: 5000, label: "the answer finished after the drop, replayed to the new connection" });
    b.assertSchemaClean();
    b.close();
  });
}

test("a client that cancelled its turn and then dropped: the turn ends cancelled, journaled, the rest of the answer never made", { skip, timeout: 60000 }, async () => {
  const { home, ws } = await setup([story()]);
  const server = await startServer({ env: home.env, cwd: ws });
  const { c: a, sessionId, prompt } = await promptRunning(server.url, ws, "tell a long story");
  await a.connection.agent.notify("session/cancel", { sessionId });
  const r = await withTimeout(prompt, 10000, "the prompt's answer after session/cancel");
  assert.equal(r.stopReason, "cancelled");
  a.close();
  const ends = await waitForTurnEnd(home, sessionId, 10000);
  assert.equal(ends[0].stopReason, "cancelled");
  const b = connect(server.url);
  await b.initialize();
  await b.call("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.ok(!b.textOf(sessionId).includes("the-end."), "a cancelled turn does not go on after the drop");
});

test("an MCP server tunnelled over a connection ends with it: its pending call fails, it is never reached again, and the turn goes on to its end", { skip, timeout: 90000 }, async () => {
  const tunnel = await makeTunnelServer();
  const { fake, home, ws } = await setup([
    { toolCalls: [{ id: "call_slow", name: "mcp__editor-tools__slow", arguments: { ms: 60000 } }] },
    { toolCalls: [{ id: "call_echo", name: "mcp__editor-tools__echo", arguments: { message: "after the drop" } }] },
    { text: "Finished without the editor." },
  ]);
  const server = await startServer({ env: home.env, cwd: ws });
  const provider = new acpUnstable.McpOverAcpProvider();
  let slowCalled;
  const slowPromise = new Promise((resolve) => { slowCalled = resolve; });
  const a = connect(server.url, {
    onRequest: (ctx) => {
      if (ctx.method !== "mcp/message") throw new acpUnstable.RequestError(-32601, `Method not found: ${ctx.method}`);
      if (ctx.params?.method === "tools/call") slowCalled();
      return provider.handleRequest(ctx);
    },
  });
  await a.initialize();
  const reg = provider.registerServer(a.connection.agent, { name: "editor-tools", handler: tunnel.handler });
  const { sessionId } = await a.call("session/new", { cwd: ws, mcpServers: [reg.declaration] });
  a.prompt(sessionId, "use the editor's tools", 60000).catch(() => {});
  await withTimeout(slowPromise, 20000, "the tunnelled tool called through the connection");
  a.close();
  const ends = await waitForTurnEnd(home, sessionId, 20000);
  assert.equal(ends[0].stopReason, "end_turn", "the turn went on without the tunnelled server: not hung on it, not cancelled");
  assert.equal(fake.requests.length, 3);
  assert.match(toolResultText(fake.requests[1], "call_slow"), /disconnect/i, "the call pending at the drop failed, saying why");
  assert.doesNotMatch(toolResultText(fake.requests[2], "call_echo"), /tunnel echo/, "the tunnelled server is not reached after its connection dropped");
  assert.ok(!tunnel.calls.some((c) => c.tool === "echo"), "nothing reached the editor's server after the drop");
  await tunnel.close();
});

const clientsKept = (stderr) => [...stderr.matchAll(/ACP network client freed \((\d+) clients kept\)/g)].map((m) => Number(m[1]));
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

test("connect/drop cycles: each dropped client (WebSocket and Streamable HTTP) is freed, and the server's memory does not grow with them", { skip, timeout: 180000 }, async () => {
  const CYCLES = 40;
  const { home, ws } = await setup(Array.from({ length: CYCLES + 10 }, (_, i) => ({ text: `answer ${i}` })));
  const server = await startServer({ env: { ...home.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  const cycle = async (i) => {
    const c = connect(i % 2 ? server.httpUrl : server.url);
    await c.initialize();
    const { sessionId } = await c.newSession(ws);
    assert.equal((await c.prompt(sessionId, `hello ${i}`)).stopReason, "end_turn");
    c.close();
  };
  const freedAll = (n) => waitUntil(() => clientsKept(server.stderr).length === n && clientsKept(server.stderr).at(-1) === 0,
    { timeout: 15000, label: `${n} dropped clients freed` });
  for (let i = 0; i < 10; i++) await cycle(i);
  await freedAll(10);
  const rssAfter10 = rssKb(server.child.pid);
  for (let i = 10; i < CYCLES; i++) await cycle(i);
  await freedAll(CYCLES);
  const rssAfterAll = rssKb(server.child.pid);
  console.log(`server RSS after 10 cycles ${(rssAfter10 / 1024).toFixed(1)} MiB, after ${CYCLES}: ${(rssAfterAll / 1024).toFixed(1)} MiB`);
  assert.deepEqual(clientsKept(server.stderr).slice(-1), [0], "every dropped client's connection and agent are freed");
  assert.ok(rssAfterAll - rssAfter10 < 8 * 1024, `RSS grew ${rssAfterAll - rssAfter10} KiB over ${CYCLES - 10} connect/drop cycles`);
});

test("SIGTERM with a turn running a command: the turn ends cancelled, journaled; exit 0 within 2 s; no child left", { skip, timeout: 60000 }, async () => {
  const secs = `30.${crypto.randomInt(100000, 999999)}`;
  const pattern = `sleep ${secs}`;
  const { home, ws } = await setup([{ toolCalls: [{ id: "call_sleep", name: "bash", arguments: { command: `${pattern}; echo finished` } }] }]);
  const server = await startServer({ env: home.env, cwd: ws });
  const c = connect(server.url);
  await c.initialize();
  const { sessionId } = await c.newSession(ws);
  c.prompt(sessionId, "run the long command", 60000).catch(() => {});
  await waitUntil(() => pgrep(pattern).length > 0, { timeout: 15000, label: `process ${pattern} running` });
  const t0 = Date.now();
  process.kill(server.child.pid, "SIGTERM");
  const exit = await withTimeout(server.exited, 2000, "exit after SIGTERM");
  assert.ok(Date.now() - t0 < 2000, `exited ${Date.now() - t0} ms after SIGTERM`);
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.deepEqual(journalTurnEnds(home, sessionId).map((e) => e.stopReason), ["cancelled"], "the running turn's end (cancelled) is in the journal");
  await assertProcessesGone(() => pgrep(pattern), { promise: "after SIGTERM the turn's command is gone" });
});
