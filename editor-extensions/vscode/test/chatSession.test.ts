// One chat (ChatSession) against a hand-made host and connection: what it sends to the server, what
// it shows, and when. No server process: the connection records the calls and answers as told.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { ChatSession, SERVER_STOPPED } from "../src/vscode/chatSession.js";
import { FakeHost } from "./fakeAgent.js";

function setup() {
  const host = new FakeHost();
  return { host, conn: host.fake, chat: new ChatSession(host) };
}
const notices = (c: ChatSession) => c.state.items.filter((i) => i.kind === "notice").map((i) => (i as { text: string }).text);
const tick = () => new Promise((r) => setImmediate(r));
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((a, b) => ((resolve = a), (reject = b)));
  return { promise, resolve, reject };
}
function tmpFile(name: string, text: string) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovcs-")));
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}
const editCall = (id: string, file: string, oldText: string, newText: string, status: acp.ToolCallStatus = "completed"): acp.SessionUpdate => ({
  sessionUpdate: "tool_call",
  toolCallId: id,
  title: `Edit ${id}`,
  kind: "edit",
  status,
  content: [{ type: "diff", path: file, oldText, newText }],
});

beforeEach(() => __test.reset());

test("a plain message is sent as text in a new session of the folder", async () => {
  const { chat, conn, host } = setup();
  const r = await chat.prompt("hello");
  assert.deepEqual(conn.of("newSession"), [["/work/folder", []]], "a session is opened in the folder first");
  assert.deepEqual(conn.of("prompt"), [["s1", "hello"]], "a message without attachments goes as plain text");
  assert.equal(r?.stopReason, "end_turn");
  assert.equal(host.turnsStarted, 1, "the host hears of the turn (edit highlights are cleared)");
  assert.equal(chat.state.busy, false);
});

test("images the agent does not take are left out, and the chat says which", async () => {
  const { chat, conn } = setup();
  await chat.prompt("look", [{ kind: "image", id: "i1", name: "shot.png", mimeType: "image/png", data: "AAAA" }, { kind: "image", id: "i2", name: "b.png", mimeType: "image/png", data: "BBBB" }]);
  assert.deepEqual(notices(chat), ["The agent does not take images; left out: shot.png, b.png"], "a warning names the images left out");
  assert.equal((chat.state.items.find((i) => i.kind === "notice") as { severity: string }).severity, "warning");
  assert.deepEqual(conn.of("prompt")[0]![1], [{ type: "text", text: "look" }], "the text is still sent");
  conn.promptCapabilities = { image: true };
  await chat.prompt("again", [{ kind: "image", id: "i3", name: "c.png", mimeType: "image/png", data: "CCCC" }]);
  assert.equal(notices(chat).length, 1, "an agent that takes images gets them without a warning");
});

test("a failed prompt ends the turn with its error; a server that died meanwhile is named as the cause", async () => {
  const { chat, conn, host } = setup();
  conn.answers.prompt = async () => {
    throw new Error("model overloaded");
  };
  const r = await chat.prompt("one");
  assert.equal(r, undefined);
  assert.equal(chat.state.busy, false, "the turn is over");
  assert.deepEqual(notices(chat), ["model overloaded"], "a server still running: the prompt's own error is shown");

  // the process exits right after the failed request: the stop is the cause to show
  conn.answers.prompt = async () => {
    setTimeout(() => conn.die(), 20);
    throw new Error("connection closed");
  };
  await chat.prompt("two");
  assert.deepEqual(notices(chat).slice(1), [SERVER_STOPPED], "the server stopping is shown, not the broken connection");

  // the connection is gone altogether by the time the failure is seen
  const other = setup();
  other.conn.answers.prompt = async () => {
    other.host.conn = undefined;
    throw new Error("write after end");
  };
  await other.chat.prompt("three");
  assert.deepEqual(notices(other.chat), [SERVER_STOPPED], "no connection left: the server stopped");
  void host;
});

test("edits are highlighted only when they complete during a running turn, not when a loaded session replays them", async () => {
  const { chat, host } = setup();
  const file = "/work/folder/a.ts";
  chat.onUpdate(editCall("replayed", file, "a", "b"));
  assert.deepEqual(host.edits, [], "a replayed (not running) edit is not highlighted");
  chat.emit({ type: "turnStarted" });
  chat.onUpdate(editCall("live", file, "b", "c", "in_progress"));
  assert.deepEqual(host.edits, [], "an edit still in progress is not highlighted yet");
  chat.onUpdate({ sessionUpdate: "tool_call_update", toolCallId: "live", status: "completed" });
  assert.deepEqual(host.edits, [{ type: "diff", path: file, oldText: "b", newText: "c" }], "the edit is highlighted when it completes");
  chat.onUpdate({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } });
  assert.equal(host.edits.length, 1, "other updates highlight nothing");
});

test("a permission prompt: answered with the option chosen; cancelled by an abort, a Stop or the server stopping", async () => {
  const { chat } = setup();
  const req = (id: string): acp.RequestPermissionRequest => ({ sessionId: "s1", toolCall: { toolCallId: id }, options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }] });
  const answered = chat.askPermission("p1", req("t1"), new AbortController().signal);
  chat.answerPermission("p1", "yes");
  assert.deepEqual(await answered, { outcome: { outcome: "selected", optionId: "yes" } }, "the option chosen is the answer");
  assert.equal(chat.state.permissions.p1!.outcome, "yes", "and shown");

  const ac = new AbortController();
  const aborted = chat.askPermission("p2", req("t2"), ac.signal);
  ac.abort();
  assert.deepEqual(await aborted, { outcome: { outcome: "cancelled" } }, "a request the agent withdrew (abort) is cancelled");
  assert.equal(chat.state.permissions.p2!.outcome, "cancelled", "and shown as cancelled");

  const stopped = chat.askPermission("p3", req("t3"), new AbortController().signal);
  chat.emit({ type: "turnStarted" });
  chat.serverStopped();
  assert.deepEqual(await stopped, { outcome: { outcome: "cancelled" } }, "the server stopping cancels a pending prompt");
  assert.equal(chat.state.permissions.p3!.outcome, "cancelled");
  assert.equal(chat.state.busy, false, "and ends the running turn");
  assert.deepEqual(notices(chat), [SERVER_STOPPED], "saying the server stopped");
  chat.serverStopped();
  assert.deepEqual(notices(chat), [SERVER_STOPPED], "without a running turn there is nothing to say");
});

test("Stop, mode and settings need a session: without one nothing is sent", async () => {
  const { chat, conn } = setup();
  await chat.cancel();
  await chat.setMode("plan");
  await chat.setConfigOption("model", "x");
  assert.deepEqual(conn.calls, [], "no request for a session that does not exist");
  await chat.newChat();
  await chat.cancel();
  assert.deepEqual(conn.of("cancel"), [["s1"]], "with a session, Stop cancels it");
});

test("a setting change: the options the server answers with are shown; an answer without them keeps the current ones", async () => {
  const { chat, conn } = setup();
  const opts = [{ id: "model", name: "Model", type: "select", currentValue: "y", options: [{ value: "x", name: "X" }, { value: "y", name: "Y" }] }] as acp.SessionConfigOption[];
  conn.answers.newSession = async () => ({ sessionId: "s1", configOptions: [{ ...opts[0], currentValue: "x" }] });
  await chat.newChat();
  conn.answers.setConfigOption = async () => ({ configOptions: opts });
  await chat.setConfigOption("model", "y");
  assert.deepEqual(conn.of("setConfigOption"), [["s1", "model", "y"]]);
  assert.equal((chat.state.configOptions[0] as { currentValue: string }).currentValue, "y", "the new value is shown");
  conn.answers.setConfigOption = async () => ({});
  await chat.setConfigOption("model", "x");
  assert.deepEqual(chat.state.configOptions, opts, "an answer without options leaves the shown ones");
});

test("New Chat and loading a session close the session left (when the agent can), never one still loading", async () => {
  const { chat, conn, host } = setup();
  await chat.newChat();
  await chat.newChat();
  assert.deepEqual(conn.of("closeSession"), [["s1"]], "the session left is closed");
  conn.supportsClose = false;
  await chat.newChat();
  assert.deepEqual(conn.of("closeSession"), [["s1"]], "an agent without session/close gets none");
  conn.supportsClose = true;

  // reloading after a restart keeps the chat shown while the session loads
  const load = deferred<unknown>();
  conn.answers.loadSession = () => load.promise;
  host.sessions = [{ sessionId: "other", cwd: "/work/folder", title: "Not this one" }, { sessionId: "old", cwd: "/work/folder", title: "The old one" }];
  const loading = chat.loadSession("old", true);
  await tick();
  assert.equal(chat.state.sessionId, "loading:old", "marked as loading");
  assert.deepEqual(chat.persisted("f").sessionId, "old", "a reload meanwhile saves the session being loaded");
  const n = conn.of("closeSession").length;
  await chat.close();
  assert.equal(conn.of("closeSession").length, n, "a session still loading is not closed");
  const model = [{ id: "model", name: "Model", type: "select", currentValue: "m", options: [{ value: "m", name: "M" }] }];
  load.resolve({ modes: { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }] }, configOptions: model });
  await loading;
  assert.equal(chat.state.sessionId, "old");
  assert.equal(chat.state.title, "The old one", "the loaded session's title from the session list");
  assert.equal(chat.state.modes?.currentModeId, "ask", "its modes from the load's answer");
  assert.deepEqual(chat.state.configOptions, model, "and its options");
});

test("a chat whose server is gone: closing it sends nothing; sending starts a new session", async () => {
  const { chat, conn, host } = setup();
  await chat.newChat();
  host.conn = undefined;
  await chat.close();
  assert.deepEqual(conn.of("closeSession"), [], "no server: nothing to close");

  const next = setup();
  await next.chat.newChat();
  next.host.conn = undefined; // stopped; ensureStarted brings it back
  await next.chat.prompt("after the stop");
  assert.deepEqual(next.conn.of("newSession").length, 2, "a new session on the new server");
  assert.deepEqual(next.conn.of("prompt"), [["s2", "after the stop"]]);
});

test("closing a tab stops its running turn; an idle one is not cancelled", async () => {
  const idle = setup();
  await idle.chat.newChat();
  await idle.chat.close();
  assert.deepEqual(idle.conn.of("cancel"), [], "an idle chat sends no cancel");
  assert.deepEqual(idle.conn.of("closeSession"), [["s1"]], "its session is closed");

  const busy = setup();
  const turn = deferred<acp.PromptResponse>();
  busy.conn.answers.prompt = () => turn.promise;
  const running = busy.chat.prompt("long");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(busy.chat.state.busy, true);
  await busy.chat.close();
  assert.deepEqual(busy.conn.of("cancel"), [["s1"]], "a running turn is cancelled");
  turn.resolve({ stopReason: "cancelled" });
  await running;
});

test("the files a turn changed: each turn's own, opened and undone by its item", async () => {
  const { chat } = setup();
  const a = tmpFile("a.txt", "two\n");
  const b = tmpFile("b.txt", "new b\n");
  const turn = (u: acp.SessionUpdate) => {
    chat.emit({ type: "turnStarted" });
    chat.onUpdate(u);
    chat.emit({ type: "turnEnded", stopReason: "end_turn" });
  };
  chat.emit({ type: "notice", severity: "info", text: "something before" });
  turn(editCall("e1", a, "one\n", "two\n"));
  turn(editCall("e2", b, "old b\n", "new b\n"));
  const [first, second] = chat.state.items.filter((i) => i.kind === "changes");
  assert.ok(first && second, "one list of changes per turn");
  const notice = chat.state.items.find((i) => i.kind === "notice")!;
  assert.equal(chat.changedFile(notice.id, a), undefined, "an item that is no list of changes has no files");
  assert.equal(chat.changedFile(second.id, a), undefined, "a file of another turn is not in this one");
  assert.deepEqual(chat.changedFile(second.id, b), { path: b, before: "old b\n", after: "new b\n" }, "the file as the turn changed it");
  assert.deepEqual(chat.changedFile(first.id, a), { path: a, before: "one\n", after: "two\n" });

  await chat.undoTurn(notice.id);
  await chat.undoTurn(second.id);
  assert.equal(fs.readFileSync(b, "utf8"), "old b\n", "undo puts the turn's file back");
  assert.equal(fs.readFileSync(a, "utf8"), "two\n", "another turn's file is untouched");
  const undone = chat.state.items.find((i) => i.id === second.id) as { undo?: unknown };
  assert.deepEqual(undone.undo, [{ path: b, result: "restored" }], "the item shows what was undone");
  assert.equal((chat.state.items.find((i) => i.id === first.id) as { undo?: unknown }).undo, undefined, "the other turn's item is not marked");
  fs.writeFileSync(b, "new b\n");
  await chat.undoTurn(second.id);
  assert.equal(fs.readFileSync(b, "utf8"), "new b\n", "a turn is undone once: a second undo does nothing");
});

test("after a window reload: the queue comes back and is shown; a chat with a session keeps it", async () => {
  const { chat, conn, host } = setup();
  await chat.restore({ queue: [{ text: "waiting", attachments: [] }] });
  assert.deepEqual(chat.queue.list.map((q) => q.text), ["waiting"], "the queue is back");
  assert.ok(host.fires > 0, "and shown");
  assert.deepEqual(conn.calls, [], "nothing sent, no session opened");
  await chat.newChat();
  await chat.restore({ sessionId: "other", queue: [] });
  assert.equal(chat.state.sessionId, "s1", "a chat that has a session keeps it");
  assert.deepEqual(conn.of("loadSession"), []);
});

test("a turn's tokens from the prompt's answer are shown under it, with its cost", async () => {
  const { chat, conn } = setup();
  conn.answers.prompt = async () => {
    chat.onUpdate({ sessionUpdate: "usage_update", used: 1234, size: 200_000, cost: { amount: 0.0123, currency: "USD" } });
    return { stopReason: "end_turn", usage: { inputTokens: 1200, outputTokens: 34, totalTokens: 1234 } };
  };
  await chat.prompt("hello");
  const last = chat.state.items.at(-1) as { kind: string; tokens?: unknown; cost?: unknown };
  assert.deepEqual({ ...last, id: undefined, rev: undefined }, { kind: "usage", id: undefined, rev: undefined, tokens: { input: 1200, output: 34, total: 1234 }, cost: { amount: 0.0123, currency: "USD" } });
  assert.deepEqual(chat.state.sessionTokens, { input: 1200, output: 34 });
});
