// session/fork (unstable): a new session holding a copy of another's history, with its own id and
// folder, the source's mode carried over, listed, loadable and resumable; the source untouched.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, expectRpcError, waitUntil } from "./harness.mjs";

// What a replay shows of the conversation: user and agent text, in order.
function conversationOf(h, sessionId) {
  return h
    .updatesOf(sessionId)
    .filter((u) => (u.sessionUpdate === "user_message_chunk" || u.sessionUpdate === "agent_message_chunk") && u.content?.type === "text")
    .map((u) => `${u.sessionUpdate === "user_message_chunk" ? "user" : "agent"}: ${u.content.text}`);
}

const requestText = (req) => JSON.stringify(req.body.messages);

scenario("session/fork copies the history: source and fork load with the same start and diverge after", async (ctx) => {
  const script = [{ text: "Answer one." }, { text: "Fork answer." }, { text: "Source answer." }, { text: "Resumed fork." }];
  const { fake, ws, home, h } = await ctx.setup({ script, initialize: false });
  const forkWs = ctx.workspace({});
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.fork, {}, "session/fork is advertised");
  const source = (await h.newSession(ws)).sessionId;
  await h.setMode(source, "full_auto");
  assert.equal((await h.prompt(source, "First question")).stopReason, "end_turn");
  const journal = path.join(home.dataDir, "sessions", `${source}.jsonl`);
  const sourceBefore = fs.readFileSync(journal, "utf8");

  const forked = await h.request("session/fork", { sessionId: source, cwd: forkWs, mcpServers: [] });
  const fork = forked.sessionId;
  assert.ok(fork && fork !== source, "the fork has an id of its own");
  assert.equal(forked.modes.currentModeId, "full_auto", "the fork runs in the source's mode");

  assert.equal((await h.prompt(fork, "Fork question")).stopReason, "end_turn");
  const toFork = fake.requests[1];
  assert.match(requestText(toFork), /First question/, "the model is told the source's history in the fork");
  assert.match(requestText(toFork), /Answer one\./);
  assert.match(toFork.body.messages[0].content, new RegExp(forkWs.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), "the fork works in the folder it was given");
  assert.equal(fs.readFileSync(journal, "utf8"), sourceBefore, "forking and using the fork leave the source's journal as it was");

  assert.equal((await h.prompt(source, "Source question")).stopReason, "end_turn");
  assert.doesNotMatch(requestText(fake.requests[2]), /Fork question/, "the source does not see what happened in the fork");

  const listed = await h.request("session/list", {});
  const info = listed.sessions.find((s) => s.sessionId === fork);
  assert.ok(info, "session/list lists the fork");
  assert.equal(info.cwd, forkWs);
  assert.equal(info.title, "First question (fork)", "the fork's title says it is a fork (history would show two identical entries)");
  assert.equal(listed.sessions.find((s) => s.sessionId === source)?.title, "First question", "the source keeps its title");
  h.assertSchemaClean();
  await h.close();

  // After a restart both load; the fork's history is the source's up to the fork, then its own.
  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId: source, cwd: ws, mcpServers: [] });
  const forkLoaded = await h2.request("session/load", { sessionId: fork, cwd: forkWs, mcpServers: [] });
  assert.equal(forkLoaded.modes.currentModeId, "full_auto", "the fork keeps the source's mode after a restart");
  const src = conversationOf(h2, source);
  const frk = conversationOf(h2, fork);
  assert.deepEqual(src, ["user: First question", "agent: Answer one.", "user: Source question", "agent: Source answer."]);
  assert.deepEqual(frk, ["user: First question", "agent: Answer one.", "user: Fork question", "agent: Fork answer."]);

  // Until it gets a title of its own.
  await h2.request("session/set_title", { sessionId: fork, title: "My experiment" });
  const relisted = await h2.request("session/list", {});
  assert.equal(relisted.sessions.find((s) => s.sessionId === fork)?.title, "My experiment", "a title given later replaces it");

  // Resumable like any other session.
  await h2.request("session/close", { sessionId: fork });
  await h2.request("session/resume", { sessionId: fork, cwd: forkWs, mcpServers: [] });
  assert.equal((await h2.prompt(fork, "Go on")).stopReason, "end_turn");
  assert.match(requestText(fake.requests[3]), /Fork question/);
  assert.doesNotMatch(requestText(fake.requests[3]), /Source question/);
  h2.assertSchemaClean();
});

scenario("session/fork during a turn copies what was committed before it; a saved source forks whole; bad requests get errors", async (ctx) => {
  const script = [
    { text: "Done one." },
    { chunks: ["Partial ", "answer ", "never ", "ends"], stallAfterChunks: 2 },
    { text: "Fork goes on." },
    { text: "Second fork goes on." },
  ];
  const { fake, ws, h } = await ctx.setup({ script, configOpts: { idleTimeoutSeconds: 30 } });
  const source = (await h.newSession(ws)).sessionId;
  await h.prompt(source, "First prompt");
  const running = h.prompt(source, "Second prompt");
  await waitUntil(() => h.textOf(source).includes("Partial answer"), { label: "the second turn streaming" });

  const fork = (await h.request("session/fork", { sessionId: source, cwd: ws, mcpServers: [] })).sessionId;
  assert.equal((await h.prompt(fork, "Fork prompt")).stopReason, "end_turn");
  const toFork = requestText(fake.requests[2]);
  assert.match(toFork, /First prompt/);
  assert.match(toFork, /Done one\./);
  assert.doesNotMatch(toFork, /Second prompt/, "the turn in flight is not part of the fork");

  await h.cancel(source);
  assert.equal((await running).stopReason, "cancelled");
  await h.request("session/close", { sessionId: source });

  // A source that is only on disk forks with everything it holds, the cancelled turn included.
  const second = (await h.request("session/fork", { sessionId: source, cwd: ws, mcpServers: [] })).sessionId;
  await h.prompt(second, "And now?");
  assert.match(requestText(fake.requests[3]), /Second prompt/);

  const unknown = await expectRpcError(h.request("session/fork", { sessionId: "ses_nobody", cwd: ws, mcpServers: [] }));
  assert.equal(unknown.code, -32002, "an unknown session is the error every session method gives");
  assert.match(unknown.message, /ses_nobody/);
  const noCwd = await expectRpcError(h.request("session/fork", { sessionId: source, mcpServers: [] }));
  assert.equal(noCwd.code, -32602);
  const relative = await expectRpcError(h.request("session/fork", { sessionId: source, cwd: "rel/dir", mcpServers: [] }));
  assert.equal(relative.code, -32602);
  const sessions = (await h.request("session/list", {})).sessions.map((s) => s.sessionId).sort();
  assert.deepEqual(sessions, [source, fork, second].sort(), "failed forks leave no session behind");
  h.assertSchemaClean();
});
