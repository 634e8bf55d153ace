// Taking back a message (issue 36, item 3): every user message has an id (the client's own when it
// sends one on session/prompt, answered as userMessageId; messageId on its replayed
// user_message_chunk); _session/rewind drops it and everything after it from what the model sees
// next and from what session/load replays; bad input changes nothing.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scenario, expectRpcError, userText } from "./harness.mjs";

const userChunks = (h, sessionId) => h.updatesOf(sessionId, "user_message_chunk");

async function loadAgain(ctx, home, ws, sessionId) {
  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  return h2;
}

scenario("a rewind drops the message and what follows from the model's next request and from session/load", async (ctx) => {
  const { fake, ws, home, h } = await ctx.setup({
    script: [{ text: "Answer one." }, { text: "Answer two." }, { text: "Answer three." }, { text: "Answer edited." }],
    initialize: false,
  });
  const init = await h.initialize();
  assert.deepEqual(init._meta?.rewind, { supported: true, files: true },
    "promise: initialize advertises _session/rewind and _session/rewind_files (_meta.rewind), beside _meta.steering");
  const { sessionId } = await h.newSession(ws);
  const first = await h.prompt(sessionId, "alpha question");
  assert.match(first.userMessageId, /^msg_/, "promise: the prompt's answer names its user message's id");
  const second = await h.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "bravo question" }], messageId: "client-bravo" });
  assert.equal(second.userMessageId, "client-bravo", "promise: a client's own message id is the message's id");
  await h.prompt(sessionId, "charlie question");

  const reply = await h.request("_session/rewind", { sessionId, messageId: "client-bravo" });
  assert.deepEqual(reply, { rewound: true, sessionId });

  await h.prompt(sessionId, "delta question");
  const sent = fake.requests.at(-1);
  const all = JSON.stringify(sent.body.messages);
  assert.match(userText(sent), /alpha question/);
  assert.match(all, /Answer one\./, "what came before the rewound message stays");
  for (const gone of ["bravo question", "Answer two.", "charlie question", "Answer three."])
    assert.ok(!all.includes(gone), `promise: the model's next request no longer contains '${gone}'`);
  h.assertSchemaClean();
  await h.close();

  const h2 = await loadAgain(ctx, home, ws, sessionId);
  const chunks = userChunks(h2, sessionId);
  assert.deepEqual(chunks.map((c) => c.content.text), ["alpha question", "delta question"],
    "promise: session/load no longer replays the rewound messages");
  assert.equal(chunks[0].messageId, first.userMessageId, "promise: a replayed user message carries the id it was given");
  assert.ok(chunks[1].messageId && chunks[1].messageId !== first.userMessageId);
  assert.equal(h2.answerOf(sessionId), "Answer one.Answer edited.");
  // The loaded session's next request is the same conversation.
  fake.push({ text: "Still here." });
  await h2.prompt(sessionId, "echo");
  const after = JSON.stringify(fake.requests.at(-1).body.messages);
  assert.ok(!after.includes("bravo question") && after.includes("delta question"), "a loaded session's model sees the rewound conversation");
  // A rewind right after a load (its conversation is read after the answer) works on what was loaded.
  await h2.request("_session/rewind", { sessionId, messageId: chunks[1].messageId });
  fake.push({ text: "Once more." });
  await h2.prompt(sessionId, "echo again");
  const last = JSON.stringify(fake.requests.at(-1).body.messages);
  assert.ok(!last.includes("delta question") && last.includes("alpha question"), "a replayed message id can be rewound to");
  h2.assertSchemaClean();
});

scenario("a rewind of an unknown message, during a turn or of an unknown or closed session is a clear error and changes nothing", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [{ text: "One." }, { chunks: ["Slow ", "answer"], stallAfterChunks: 1 }, { text: "Three." }],
  });
  const { sessionId } = await h.newSession(ws);
  const first = await h.prompt(sessionId, "alpha question");

  const unknown = await expectRpcError(h.request("_session/rewind", { sessionId, messageId: "msg_nope" }), "unknown messageId");
  assert.equal(unknown.code, -32602);
  assert.match(unknown.message, /Unknown messageId 'msg_nope'/);
  assert.equal((await expectRpcError(h.request("_session/rewind", { sessionId }), "no messageId")).code, -32602);
  assert.equal((await expectRpcError(h.request("_session/rewind", { sessionId: "ses_nope", messageId: first.userMessageId }), "unknown session")).code, -32002);
  const taken = await expectRpcError(
    h.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "again" }], messageId: first.userMessageId }), "a used id");
  assert.equal(taken.code, -32602, "a client id already used by a message of the session is refused");

  const running = h.prompt(sessionId, "bravo question");
  await h.waitUntil(() => h.textOf(sessionId).includes("Slow"), { label: "second turn streaming" });
  const busy = await expectRpcError(h.request("_session/rewind", { sessionId, messageId: first.userMessageId }), "rewind mid-turn");
  assert.equal(busy.code, -32600, "promise: a rewind while a turn runs is refused");
  assert.match(busy.message, /A prompt is running/);
  await h.cancel(sessionId);
  assert.equal((await running).stopReason, "cancelled");

  await h.prompt(sessionId, "charlie question");
  const all = JSON.stringify(fake.requests.at(-1).body.messages);
  assert.ok(all.includes("alpha question") && all.includes("bravo question"), "promise: a refused rewind changed nothing");

  await h.request("session/close", { sessionId });
  assert.equal((await expectRpcError(h.request("_session/rewind", { sessionId, messageId: first.userMessageId }), "closed session")).code, -32002);
  h.assertSchemaClean();
});

const patch = (body) => `*** Begin Patch\n${body}*** End Patch`;
const editCall = (id, body) => ({ toolCalls: [{ id, name: "apply_patch", arguments: { patch: patch(body) } }] });

scenario("rewind_files puts back what the agent changed: dry run, a created file deleted, a conflict left alone, then forced", async (ctx) => {
  const { ws, h } = await ctx.setup({
    files: { "a.txt": "a0\n", "b.txt": "b0\n" },
    script: [
      editCall("call_a", "*** Update File: a.txt\n@@\n-a0\n+a1\n"), { text: "Changed a." },
      editCall("call_b", "*** Update File: b.txt\n@@\n-b0\n+b1\n*** Add File: new.txt\n+created\n"), { text: "Changed b." },
    ],
  });
  const read = (name) => (fs.existsSync(path.join(ws, name)) ? fs.readFileSync(path.join(ws, name), "utf8") : null);
  const { sessionId } = await h.newSession(ws);
  const first = await h.prompt(sessionId, "change a");
  await h.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "change b" }], messageId: "m-b" });
  assert.equal(read("a.txt"), "a1\n");
  assert.equal(read("new.txt"), "created\n");
  const byPath = (r) => Object.fromEntries(r.files.map((f) => [path.basename(f.path), f.action]));

  const dry = await h.request("_session/rewind_files", { sessionId, messageId: "m-b", dryRun: true });
  assert.deepEqual(byPath(dry), { "b.txt": "restore", "new.txt": "delete" }, "promise: a dry run lists what a restore would do");
  assert.equal(dry.dryRun, true);
  assert.equal(read("b.txt"), "b1\n", "promise: a dry run changes nothing");
  assert.equal(read("new.txt"), "created\n");

  fs.writeFileSync(path.join(ws, "b.txt"), "by hand\n");
  const careful = await h.request("_session/rewind_files", { sessionId, messageId: "m-b" });
  assert.deepEqual(byPath(careful), { "b.txt": "conflict", "new.txt": "delete" });
  assert.equal(read("b.txt"), "by hand\n", "promise: a file changed by hand since the agent's last write is left alone");
  assert.equal(read("new.txt"), null, "promise: a file the agent created is deleted");

  const forced = await h.request("_session/rewind_files", { sessionId, messageId: "m-b", force: true });
  assert.deepEqual(byPath(forced), { "b.txt": "restore" });
  assert.equal(read("b.txt"), "b0\n", "promise: force restores a conflicting file");

  const all = await h.request("_session/rewind_files", { sessionId, messageId: first.userMessageId });
  assert.deepEqual(byPath(all), { "a.txt": "restore" }, "files already as they were are not listed");
  assert.equal(read("a.txt"), "a0\n");

  assert.equal((await expectRpcError(h.request("_session/rewind_files", { sessionId, messageId: "nope" }), "unknown id")).code, -32602);
  assert.equal((await expectRpcError(h.request("_session/rewind_files", { sessionId: "ses_nope", messageId: "m-b" }), "unknown session")).code, -32002);
  h.assertSchemaClean();
});

scenario("rewind_files puts back what a bash command changed in a git work tree", async (ctx) => {
  const command = "printf 'changed\\n' > tracked.txt && printf 'fresh\\n' > fresh.txt && printf 'more\\n' >> dirty.txt";
  const { ws, h } = await ctx.setup({
    files: { "tracked.txt": "tracked\n", "dirty.txt": "committed\n" },
    script: [{ toolCalls: [{ id: "call_sh", name: "bash", arguments: { command } }] }, { text: "Ran it." }],
  });
  const git = (...args) => execFileSync("git", ["-C", ws, ...args], { encoding: "utf8" });
  // Older than the index git writes next: clean by its stamp, so its content before comes from git.
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(ws, "tracked.txt"), past, past);
  git("init", "-q");
  git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
  fs.writeFileSync(path.join(ws, "dirty.txt"), "uncommitted\n");  // changed before the command
  const { sessionId } = await h.newSession(ws);
  const turn = await h.prompt(sessionId, "run it");
  assert.equal(fs.readFileSync(path.join(ws, "tracked.txt"), "utf8"), "changed\n");
  const r = await h.request("_session/rewind_files", { sessionId, messageId: turn.userMessageId });
  assert.deepEqual(Object.fromEntries(r.files.map((f) => [path.basename(f.path), f.action])),
    { "tracked.txt": "restore", "fresh.txt": "delete", "dirty.txt": "restore" });
  assert.equal(fs.readFileSync(path.join(ws, "tracked.txt"), "utf8"), "tracked\n", "promise: a tracked file is put back as it was");
  assert.equal(fs.existsSync(path.join(ws, "fresh.txt")), false, "promise: a file the command created is deleted");
  assert.equal(fs.readFileSync(path.join(ws, "dirty.txt"), "utf8"), "uncommitted\n", "promise: an uncommitted change from before the command is kept");
  h.assertSchemaClean();
});
