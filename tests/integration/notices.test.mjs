// Notices and context compaction as the editor sees them: `notice`, `compaction_update` and
// `compaction_summary_chunk` session updates for a client that advertised session.notices /
// session.compaction at initialize, today's quoted agent-message text for one that did not;
// live, and replayed by session/load. MCP servers that cannot start reach the user as notices.
import assert from "node:assert/strict";
import path from "node:path";
import { REPO_ROOT, pgrep, scenario, sleep, toolNames, waitUntil, writeFiles, DEFAULT_CLIENT_CAPABILITIES } from "./harness.mjs";
import { EVERYTHING } from "../fixtures/mcp/everything.mjs";

const WITH_VIEWS = { ...DEFAULT_CLIENT_CAPABILITIES, session: { notices: {}, compaction: {} } };
const KINDS = ["notice", "compaction_update", "compaction_summary_chunk"];

// Three servers that cannot start: two from session/new (a command that does not exist, one that
// exits at once with a message on stderr), one from mcp_servers/*.yaml.
const GHOST = "/nonexistent/openvaala-ghost-mcp-server";
const editorServers = [
  { name: "ghost", command: GHOST, args: [], env: [] },
  { name: "quitter", command: "sh", args: ["-c", "echo quitter-config-is-broken >&2; exit 3"], env: [] },
];
const CONFIGURED = { "mcp_servers/phantom.yaml": "id: phantom\ntype: stdio\ncommand: /nonexistent/openvaala-phantom-server\n" };

async function sessionWithBrokenServers(ctx, clientCapabilities) {
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9/v1" });
  writeFiles(home.configDir, CONFIGURED);
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities });
  await h.initialize();
  const { sessionId } = await h.newSession(ws, { mcpServers: editorServers });
  return { h, sessionId };
}

scenario("session.notices: MCP servers that cannot start (no such command, exits at once, configured) are error notices naming the server and why", async (ctx) => {
  const { h, sessionId } = await sessionWithBrokenServers(ctx, WITH_VIEWS);
  const notices = () => h.updatesOf(sessionId, "notice");
  const about = (name) => notices().find((n) => n.title.includes(`\`${name}\``));
  await h.waitUntil(() => about("ghost") && about("quitter") && about("phantom"), {
    timeout: 15000, label: "a notice for each of ghost, quitter and phantom",
  }).catch((e) => {
    throw new Error(`promise: an MCP server that cannot start reaches the user as a notice; got notices ${JSON.stringify(notices())}` +
      ` and chat text ${JSON.stringify(h.textOf(sessionId))} (${e.message})`);
  });
  for (const name of ["ghost", "quitter", "phantom"]) {
    const n = about(name);
    assert.equal(n.severity, "error", `the notice about ${name} is an error: ${JSON.stringify(n)}`);
    assert.match(n.title, /could not start/, `the title says what happened: ${JSON.stringify(n)}`);
    assert.ok(n.description && n.description.length > 0, `the notice about ${name} says why: ${JSON.stringify(n)}`);
  }
  assert.match(about("ghost").description, /openvaala-ghost-mcp-server.*(No such file|not found|ENOENT)/i,
    `promise: the notice says why the command did not start: ${about("ghost").description}`);
  assert.match(about("quitter").description, /code 3.*quitter-config-is-broken/,
    `promise: the notice says why the server did not start (its exit code and last words on stderr): ${about("quitter").description}`);
  assert.equal(h.textOf(sessionId), "", "with a notice view, nothing is written into the chat");
  h.assertSchemaClean();
}, { timeout: 30000 });

scenario("without session.notices the same failures are quoted lines of the agent's message, never a notice update", async (ctx) => {
  const { h, sessionId } = await sessionWithBrokenServers(ctx, DEFAULT_CLIENT_CAPABILITIES);
  const line = (name) => h.noticesOf(sessionId).find((t) => t.includes(`\`${name}\``));
  await h.waitUntil(() => line("ghost") && line("quitter") && line("phantom"), {
    timeout: 15000, label: "a quoted line for each of ghost, quitter and phantom",
  }).catch((e) => {
    throw new Error(`promise: without session.notices a notice is still shown as agent message text; got ${JSON.stringify(h.textOf(sessionId))} (${e.message})`);
  });
  assert.match(line("quitter"), /could not start: .+/, "title and why, on one quoted line");
  for (const kind of KINDS) assert.deepEqual(h.updatesOf(undefined, kind), [], `promise: no ${kind} update for a client that did not advertise it`);
  h.assertSchemaClean();
}, { timeout: 30000 });

// The compaction of one prompt and `/compact`, then a restart and session/load.
async function compactAndLoad(ctx, clientCapabilities) {
  const SUMMARY = "SUMMARY-9c41: the user asked about pears.";
  const { ws, home, h } = await ctx.setup({
    script: [
      { text: "Pears are fine." },
      { chunks: ["SUMMARY-9c41: the user ", "asked about ", "pears."] },  // the /compact request
      { text: "After the restart." },
    ],
    agentOpts: { clientCapabilities },
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "tell me about pears");
  assert.equal((await h.prompt(sessionId, "/compact")).stopReason, "end_turn");
  h.assertSchemaClean();
  process.kill(h.pid, "SIGKILL");
  await h.exited;
  const h2 = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  h2.assertSchemaClean();
  return { SUMMARY, h, h2, sessionId };
}

scenario("session.compaction: /compact is in_progress, summary chunks, completed; session/load replays it completed with its summary", async (ctx) => {
  const { SUMMARY, h, h2, sessionId } = await compactAndLoad(ctx, WITH_VIEWS);
  const live = h.updatesOf(sessionId).filter((u) => u.sessionUpdate.startsWith("compaction_"));
  assert.ok(live.length >= 3, `promise: a compaction is shown as compaction updates; got ${JSON.stringify(live)}`);
  const id = live[0].compactionId;
  assert.deepEqual(live[0], { sessionUpdate: "compaction_update", compactionId: id, status: "in_progress" },
    "it starts in_progress with its id");
  const chunks = live.slice(1, -1);
  assert.ok(chunks.every((c) => c.sessionUpdate === "compaction_summary_chunk" && c.compactionId === id));
  assert.equal(chunks.map((c) => c.content.text).join(""), SUMMARY, "promise: the summary streams as compaction_summary_chunk");
  assert.deepEqual(live.at(-1), { sessionUpdate: "compaction_update", compactionId: id, status: "completed" },
    "promise: it ends completed");
  assert.doesNotMatch(h.textOf(sessionId), /Compact|SUMMARY-9c41/, "nothing about it is written into the chat");

  const replayed = h2.updatesOf(sessionId).filter((u) => u.sessionUpdate.startsWith("compaction_"));
  assert.deepEqual(replayed, [{
    sessionUpdate: "compaction_update", compactionId: id, status: "completed",
    summary: [{ type: "text", text: SUMMARY }],
  }], "promise: session/load replays a compaction as compaction_update completed, with its summary and the live id");
  assert.doesNotMatch(h2.textOf(sessionId), /summarised|SUMMARY-9c41/, "the replay writes nothing about it into the chat");
}, { timeout: 30000 });

scenario("without session.compaction: the compaction is chat text live and on replay, and its summary stays out of the chat", async (ctx) => {
  const { h, h2, sessionId } = await compactAndLoad(ctx, DEFAULT_CLIENT_CAPABILITIES);
  assert.deepEqual(h.noticesOf(sessionId), [
    "Compacting the conversation: the model is summarising it to free context.",
    "Compacted 2 messages into a summary.",
  ], "promise: a client without session.compaction sees today's text");
  assert.deepEqual(h2.noticesOf(sessionId), ["The earlier conversation was summarised to fit the context window."],
    "promise: session/load shows where the compaction was, as text");
  for (const x of [h, h2]) {
    assert.doesNotMatch(x.textOf(sessionId), /SUMMARY-9c41/, "the summary is for the model, not the chat");
    for (const kind of KINDS) assert.deepEqual(x.updatesOf(undefined, kind), [], `promise: no ${kind} update for a client that did not advertise it`);
  }
}, { timeout: 30000 });

scenario("session.compaction: a compaction the model cannot write ends failed with why; one the user cancels ends cancelled", async (ctx) => {
  const { ws, h } = await ctx.setup({
    script: [
      { text: "first" },
      { status: 400, errorMessage: "summary-refused-77" },   // the first /compact
      { chunks: ["SUMMARY ", "that never ", "ends"], stallAfterChunks: 1 },  // the second, cancelled
    ],
    agentOpts: { clientCapabilities: WITH_VIEWS },
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "hello");
  await h.prompt(sessionId, "/compact");
  const ends = () => h.updatesOf(sessionId, "compaction_update").filter((u) => u.status !== "in_progress");
  assert.equal(ends().length, 1, `one compaction ended: ${JSON.stringify(h.updatesOf(sessionId))}`);
  assert.equal(ends()[0].status, "failed", "promise: a compaction the model could not write ends failed");
  assert.match(ends()[0].error ?? "", /summary-refused-77/, "and says why");

  const second = h.prompt(sessionId, "/compact");
  await h.waitForUpdate((u) => u.update.sessionUpdate === "compaction_summary_chunk", { label: "the second summary streaming" });
  await h.cancel(sessionId);
  assert.equal((await second).stopReason, "cancelled");
  await waitUntil(() => ends().length === 2, { label: "the second compaction ended" });
  const [failed, cancelled] = ends();
  assert.equal(cancelled.status, "cancelled", "promise: a compaction the user cancels ends cancelled");
  assert.notEqual(cancelled.compactionId, failed.compactionId, "each compaction has its own id");
  h.assertSchemaClean();
}, { timeout: 30000 });

scenario("a prompt that waits for a slow-starting MCP server says so with an info notice naming it; a ready server gets none", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "First." }, { text: "Second." }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  // Starts in 3 s, like `npx` fetching a package: the prompt sent right after session/new waits.
  const start = `sleep 3; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(EVERYTHING)} stdio`;
  writeFiles(home.configDir, { "mcp_servers/sluggish.yaml": `id: sluggish\ntype: stdio\ncommand: sh\nargs: ["-c", ${JSON.stringify(start)}]\n` });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: WITH_VIEWS });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const waiting = () => h.updatesOf(sessionId, "notice").filter((n) => /Waiting for MCP servers/.test(n.title));
  assert.equal((await h.prompt(sessionId, "hi", { timeout: 30000 })).stopReason, "end_turn");
  assert.equal(waiting().length, 1, `promise: a turn waiting on a starting MCP server tells the user; notices ${JSON.stringify(h.updatesOf(sessionId, "notice"))}`);
  assert.equal(waiting()[0].severity, "info");
  assert.match(waiting()[0].description, /sluggish/, "the notice names the server");
  assert.ok(toolNames(fake.requests[0]).includes("mcp__sluggish__echo"),
    "the turn waited for the server: its tools reached the model");
  assert.equal((await h.prompt(sessionId, "again", { timeout: 30000 })).stopReason, "end_turn");
  assert.equal(waiting().length, 1, "no notice when the server is already running");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("a shared MCP server that stops while session/load is still replaying is told to the loaded session after its answer", async (ctx) => {
  // Session B's history is two 3 MiB answers: while the editor does not read, the replay waits
  // after the first, so B is not answered yet when the server it shares with A dies.
  const marker = `ov-shared-notice-${process.pid}-${Date.now()}`;
  const big = "y".repeat(3 << 20);
  const fake = await ctx.fakeModel([{ chunks: [big] }, { chunks: [big] }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, idleTimeoutSeconds: 30 });
  const tiny = path.join(REPO_ROOT, "tests/fixtures/mcp/tiny-server.mjs");
  writeFiles(home.configDir, { "mcp_servers/shared.yaml": `id: shared\ntype: stdio\ncommand: ${process.execPath}\nargs: [${tiny}, ${marker}]\n` });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: WITH_VIEWS });
  await h.initialize();
  await h.newSession(ws);  // A keeps the shared server
  const b = (await h.newSession(ws)).sessionId;
  await h.prompt(b, "a long answer");
  await h.prompt(b, "another one");
  await h.request("session/close", { sessionId: b });
  const [serverPid] = await waitUntil(() => (pgrep(marker).length ? pgrep(marker) : null), { label: "the shared server running" });
  h.child.stdout.pause();
  const loaded = h.request("session/load", { sessionId: b, cwd: ws, mcpServers: [] }, { timeout: 30000 });
  await sleep(700);
  process.kill(serverPid, "SIGKILL");
  await sleep(1000);  // the agent sees it go while B's answer is held back by the replay
  h.child.stdout.resume();
  await loaded;
  await waitUntil(() => h.updatesOf(b, "notice").some((n) => n.title.includes("`shared`")), {
    timeout: 10000,
    label: "promise: a server failure during session/load reaches the loaded session as a notice once the editor has its answer",
  });
  h.assertSchemaClean();
}, { timeout: 60000 });
