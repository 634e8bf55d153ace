// Where `openvaala acp` logs: editors show every stderr line to the user (acp.el turns each into a
// -32603 error, agent-shell into a notice), so stderr carries warnings and errors only by default;
// info lines (session start, shutdown) go to <data dir>/logs/openvaala.log.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, waitUntil } from "./harness.mjs";

const stderrLines = (h) => h.stderr.split("\n").filter((l) => l.trim() !== "");

scenario("acp mode: a session start, a turn and the exit write no info line to stderr; info goes to the log file", async (ctx) => {
  const { ws, home, h } = await ctx.setup({ script: [{ chunks: ["hello there"] }] });
  const { sessionId } = await h.newSession(ws);
  const r = await h.prompt(sessionId, "say hello");
  assert.equal(r.stopReason, "end_turn");
  const exit = await h.close();
  assert.equal(exit?.code, 0, "the agent exits cleanly on stdin EOF");

  const notWarnings = stderrLines(h).filter((l) => !/\[(warning|error|critical)\]/.test(l));
  assert.deepEqual(notWarnings, [], "stderr carries only warnings and errors by default (no [info] lines)");

  const logFile = path.join(home.dataDir, "logs", "openvaala.log");
  const log = fs.readFileSync(logFile, "utf8");
  assert.match(log, new RegExp(`\\[info\\] session ${sessionId} in `), "the session start (info) is in the log file");
  assert.match(log, /\[info\] shutting down: stdin closed/, "the shutdown (info) is in the log file");
});

scenario("acp mode: warnings still reach stderr (and the log file)", async (ctx) => {
  // A SessionStart hook that fails is a warning ("hook ... failed"), logged as the session starts.
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  fs.mkdirSync(path.join(home.configDir, "hooks"), { recursive: true });
  fs.writeFileSync(path.join(home.configDir, "hooks", "start.yaml"),
    "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n          command: 'echo broken-start-hook >&2; exit 3'\n");
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  await h.newSession(ws);
  // SessionStart hooks run after the answer.
  await waitUntil(() => /broken-start-hook/.test(h.stderr), { label: "the failed SessionStart hook's warning" });
  await h.close();
  assert.match(h.stderr, /\[warning\] .*broken-start-hook/, "the failed hook's warning is on stderr");
  assert.doesNotMatch(h.stderr, /\[info\]/, "no info line on stderr");
  const log = fs.readFileSync(path.join(home.dataDir, "logs", "openvaala.log"), "utf8");
  assert.match(log, /\[warning\] .*broken-start-hook/, "the warning is in the log file too");
});

scenario("acp mode: OPENVAALA_LOG_STDERR=info brings info lines back to stderr", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.close();
  assert.match(h.stderr, new RegExp(`\\[info\\] session ${sessionId} in `), "asked-for info lines are on stderr");
});

scenario("acp mode: a model retry is info (the editor gets a notice), not a stderr warning; the log file keeps it", async (ctx) => {
  const { ws, home, h } = await ctx.setup({ script: [{ status: 500, errorMessage: "overloaded" }, { text: "recovered" }] });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.match(h.textOf(sessionId), /recovered/);
  await h.close();
  assert.doesNotMatch(h.stderr, /retry/, `the retry is not on stderr (editors show stderr as errors):\n${h.stderr}`);
  const log = fs.readFileSync(path.join(home.dataDir, "logs", "openvaala.log"), "utf8");
  assert.match(log, /\[info\] model request failed .*; retry 1\/2 in \d+ ms/, "the retry is in the log file, at info");
});
