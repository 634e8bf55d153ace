// 50 concurrent ACP connections to one `openvaala acp --listen` (25 WebSocket, 25 Streamable
// HTTP): each initializes, makes a session and runs a short prompt at the same time; each sees
// only its own session's updates, no answer reaches two connections, and the server's RSS stays
// under 64 MiB.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { agentBinary, agentBinaryExists } from "./harness.mjs";
import { cleanupNetwork, connect, setup, startServer } from "./network-harness.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
after(cleanupNetwork);

const CONNECTIONS = 50;
const status = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1]);

test("50 concurrent connections: each runs a prompt, sees only its own session, and the server stays under 64 MiB RSS", { skip, timeout: 120000 }, async () => {
  // Spare answers: under load the agent may retry a model request (a reused keep-alive socket
  // the fake model closed), which takes the next one.
  const answers = Array.from({ length: CONNECTIONS + 10 }, (_, i) => `answer-${i}.`);
  const { home, ws } = await setup(answers.map((a) => ({ chunks: [a.slice(0, 4), a.slice(4)], chunkDelayMs: 5 })));
  const server = await startServer({ env: home.env, cwd: ws });
  const clients = Array.from({ length: CONNECTIONS }, (_, i) => connect(i % 2 ? server.httpUrl : server.url));
  const sessions = await Promise.all(clients.map(async (c, i) => {
    await c.initialize();
    const { sessionId } = await c.newSession(ws);
    const r = await c.prompt(sessionId, `prompt ${i}`, 60000);
    assert.equal(r.stopReason, "end_turn", `connection ${i}`);
    return sessionId;
  }));
  assert.equal(new Set(sessions).size, CONNECTIONS, "every connection has its own session");
  const seen = [];
  clients.forEach((c, i) => {
    for (const u of c.updates) assert.equal(u.sessionId, sessions[i], `connection ${i} saw another connection's update`);
    seen.push(c.textOf(sessions[i]));
    c.assertSchemaClean();
  });
  for (const text of seen) assert.ok(answers.includes(text), `a connection's answer arrived whole and alone: '${text}'`);
  assert.equal(new Set(seen).size, CONNECTIONS, "no answer reached two connections");
  const rssKb = status(server.child.pid, "VmRSS");
  const peakKb = status(server.child.pid, "VmHWM");
  console.log(`server RSS with ${CONNECTIONS} connections: ${(rssKb / 1024).toFixed(1)} MiB (peak ${(peakKb / 1024).toFixed(1)} MiB)`);
  assert.ok(rssKb < 64 * 1024, `server RSS ${rssKb} KiB must stay under 64 MiB`);
});
