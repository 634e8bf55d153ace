// Chats on one folder's server (the side bar's and editor tabs'), queued messages and attachments,
// against the `vscode` stub and the scripted stand-in agent.
import { test as nodeTest, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { MemorySecrets } from "./memorySecrets.js";
import { __test } from "./stubs/vscode.js";
import { FolderAgent, type FolderAgentDeps } from "../src/vscode/folderAgent.js";
import type { ChatSession } from "../src/vscode/chatSession.js";
import type { Diff } from "../src/core/editHighlight.js";
import { receivedOf, script, scriptedArgs } from "./scripted.js";
import { waitUntil, sleep } from "./util.js";

const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 15_000 }, fn);

function tmp(prefix = "ovchats-") {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

const agents: FolderAgent[] = [];
let revealed: ChatSession[] = [];
let edits: Diff[] = [];
let turnsStarted = 0;

function makeAgent(dir: string, args = scriptedArgs(), over: Partial<FolderAgentDeps> = {}): FolderAgent {
  __test.setConfig("openvaala.args", args);
  const a = new FolderAgent({ uri: vscode.Uri.file(dir), name: path.basename(dir), index: 0 } as vscode.WorkspaceFolder, {
    extensionPath: dir,
    globalStoragePath: path.join(tmp("ovgs-"), "gs"),
    secrets: new MemorySecrets() as unknown as vscode.SecretStorage,
    log: vscode.window.createOutputChannel("test log"),
    mcpProvider: new acp.McpOverAcpProvider(),
    binary: process.execPath,
    reveal: (c) => revealed.push(c),
    onEdit: (d) => edits.push(d),
    onTurnStarted: () => turnsStarted++,
    ...over,
  });
  agents.push(a);
  return a;
}

const prompts = async (a: FolderAgent) => (await receivedOf(a.connection!, "session/prompt")).map((p: { prompt: acp.ContentBlock[] }) => p.prompt);
const promptTexts = async (a: FolderAgent) => (await prompts(a)).map((blocks) => blocks.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join(""));
const userTexts = (c: ChatSession) => c.state.items.filter((i) => i.kind === "user").map((i) => (i as { text: string }).text);

beforeEach(() => {
  __test.reset();
  revealed = [];
  edits = [];
  turnsStarted = 0;
});
afterEach(async () => {
  for (const a of agents.splice(0)) {
    await a.stop();
    a.dispose();
  }
});

test("a message sent during a turn is queued, shown, and sent when the turn ends by itself", async () => {
  const a = makeAgent(tmp());
  const first = a.main.send(script({ sleep: 400 }));
  await waitUntil(() => a.state.busy, 5000, "the first turn");
  await a.main.send("queued one");
  await a.main.send("queued two");
  assert.deepEqual(a.main.queue.list.map((q) => q.text), ["queued one", "queued two"], "both wait in the queue, in order");
  assert.deepEqual(userTexts(a.main), [script({ sleep: 400 })], "a queued message is not in the chat as sent yet");
  await first;
  for (let i = 0; i < 250 && ((await promptTexts(a)).length < 3 || a.state.busy); i++) await sleep(20);
  assert.deepEqual((await promptTexts(a)).slice(1), ["queued one", "queued two"], "sent one turn each, oldest first");
  assert.deepEqual(a.main.queue.list, [], "the queue is empty");
  assert.deepEqual(userTexts(a.main).slice(1), ["queued one", "queued two"], "each shows as the user's message when sent");
});

test("a second message sent while the first is still opening its session waits in the queue", async () => {
  const a = makeAgent(tmp());
  const first = a.main.send("first");
  await a.main.send("second");
  assert.deepEqual(a.main.queue.list.map((q) => q.text), ["second"], "queued, not a second prompt racing the first");
  await first;
  for (let i = 0; i < 250 && (await promptTexts(a)).length < 2; i++) await sleep(20);
  assert.deepEqual(await promptTexts(a), ["first", "second"], "sent after the first turn, in order");
});

test("after Stop the queue stays (nothing is sent behind the user's back); a queued message can be taken out", async () => {
  const a = makeAgent(tmp());
  const turn = a.main.send(script({ waitCancel: true }, { stop: "cancelled" }));
  await waitUntil(() => a.state.busy, 5000, "the turn");
  await a.main.send("keep me");
  await a.main.send("remove me");
  const removed = a.main.queue.list[1]!;
  assert.equal(a.main.unqueue(removed.id)?.text, "remove me", "unqueue hands the message back");
  await a.main.cancel();
  await turn;
  await sleep(300);
  assert.equal(a.state.lastStopReason, "cancelled");
  assert.deepEqual(a.main.queue.list.map((q) => q.text), ["keep me"], "the queued message is still there after Stop");
  assert.equal((await promptTexts(a)).length, 1, "and was not sent");
});

test("a failed turn leaves the queue alone too", async () => {
  const a = makeAgent(tmp());
  const turn = a.main.send(script({ sleep: 200 }, { fail: "boom" }));
  await waitUntil(() => a.state.busy, 5000, "the turn");
  await a.main.send("after the failure");
  await turn;
  await sleep(300);
  assert.deepEqual(a.main.queue.list.map((q) => q.text), ["after the failure"], "still queued");
  assert.equal((await promptTexts(a)).length, 1, "not sent");
});

test("attachments: files embedded (as the user sees them) when the agent takes embedded context, images as image blocks", async () => {
  const dir = tmp();
  const file = path.join(dir, "a.txt");
  fs.writeFileSync(file, "on disk");
  __test.openDocument(file, "unsaved buffer");
  const a = makeAgent(dir, scriptedArgs({ caps: { promptCapabilities: { embeddedContext: true, image: true } } }));
  await a.main.send("see", [
    { kind: "file", id: "1", path: file, name: "a.txt" },
    { kind: "file", id: "2", path: path.join(dir, "gone.txt"), name: "gone.txt" },
    { kind: "image", id: "3", name: "pasted image 1", mimeType: "image/png", data: "iVBORw0KGgo=" },
  ]);
  const [blocks] = await prompts(a);
  assert.deepEqual(blocks, [
    { type: "text", text: "see" },
    { type: "resource", resource: { uri: `file://${file}`, text: "unsaved buffer" } },
    { type: "resource_link", uri: `file://${path.join(dir, "gone.txt")}`, name: "gone.txt" },
    { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
  ], "text, the open document's text, a link for an unreadable file, the image");
  const user = a.state.items.find((i) => i.kind === "user") as { attachments?: string[] };
  assert.deepEqual(user.attachments, ["a.txt", "gone.txt", "pasted image 1"], "the chat shows what was attached");
});

test("attachments without the capabilities: files as links, images left out with a warning", async () => {
  const dir = tmp();
  const a = makeAgent(dir, scriptedArgs({ caps: {} }));
  await a.main.send("see", [
    { kind: "file", id: "1", path: path.join(dir, "a.txt"), name: "a.txt" },
    { kind: "image", id: "2", name: "shot.png", mimeType: "image/png", data: "AAAA" },
  ]);
  const [blocks] = await prompts(a);
  assert.deepEqual(blocks, [{ type: "text", text: "see" }, { type: "resource_link", uri: `file://${path.join(dir, "a.txt")}`, name: "a.txt" }]);
  assert.ok(a.state.items.some((i) => i.kind === "notice" && /does not take images; left out: shot\.png/.test(i.text)), "the user is told the image was left out");
});

test("chats in tabs: each its own session on the one server; updates and permission prompts reach only their chat", async () => {
  const a = makeAgent(tmp());
  const tab = a.openChat();
  await a.main.send("in the side bar");
  await tab.send("in the tab");
  assert.ok(a.state.sessionId && tab.state.sessionId, "both have a session");
  assert.notEqual(tab.state.sessionId, a.state.sessionId, "their own sessions");
  assert.equal((await receivedOf(a.connection!, "initialize")).length, 1, "over one server connection");
  assert.deepEqual(userTexts(tab), ["in the tab"], "the tab shows its own messages only");
  assert.deepEqual(userTexts(a.main), ["in the side bar"], "and the side bar its own");
  const sessionId = tab.state.sessionId!;
  const turn = tab.send(script({ request: "session/request_permission", params: { sessionId, toolCall: { toolCallId: "t" }, options: [{ optionId: "ok", name: "OK", kind: "allow_once" }] } }));
  await waitUntil(() => Object.keys(tab.state.permissions).length === 1, 5000, "the tab's permission prompt");
  assert.deepEqual(revealed, [tab], "the tab is revealed for its permission prompt");
  assert.deepEqual(a.state.permissions, {}, "the side bar chat has no prompt");
  const [requestId] = Object.keys(tab.state.permissions);
  a.answerPermission(requestId!, "ok"); // the side bar cannot answer the tab's prompt
  await sleep(100);
  assert.equal(tab.state.permissions[requestId!]!.outcome, undefined, "an answer from another chat does nothing");
  tab.answerPermission(requestId!, "ok");
  await turn;
  assert.equal(tab.state.permissions[requestId!]!.outcome, "ok", "the tab's answer goes through");
});

test("a closed tab drops its queue and stops its turn; the side bar chat goes on", async () => {
  const a = makeAgent(tmp());
  const tab = a.openChat();
  const turn = tab.send(script({ waitCancel: true }, { stop: "cancelled" }));
  await waitUntil(() => tab.state.busy, 5000, "the tab's turn");
  await tab.send("never sent");
  a.closeChat(tab);
  await turn;
  assert.equal(tab.state.lastStopReason, "cancelled", "closing the tab cancels its turn");
  assert.deepEqual(tab.queue.list, [], "its queue is dropped");
  a.closeChat(a.main); // the side bar chat is never closed
  await a.main.send("still here");
  assert.deepEqual(userTexts(a.main), ["still here"]);
});

test("a session the chat leaves is closed when the agent can close sessions (so another tab can load it); not otherwise", async () => {
  const a = makeAgent(tmp(), scriptedArgs({ caps: { loadSession: true, sessionCapabilities: { list: {}, close: {} } } }));
  await a.main.send("one");
  const first = a.state.sessionId!;
  await a.newChat();
  const second = a.state.sessionId!;
  await a.main.loadSession(first);
  const tab = a.openChat();
  await tab.send("in the tab");
  const third = tab.state.sessionId!;
  a.closeChat(tab);
  for (let i = 0; i < 100 && (await receivedOf(a.connection!, "session/close")).length < 3; i++) await sleep(20);
  assert.deepEqual((await receivedOf(a.connection!, "session/close")).map((p: { sessionId: string }) => p.sessionId), [first, second, third], "New, Load and a closed tab close the session left");
  const b = makeAgent(tmp());
  await b.main.send("one");
  await b.newChat();
  assert.deepEqual(await receivedOf(b.connection!, "session/close"), [], "an agent without sessionCapabilities.close is not sent session/close");
});

test("an edit that completes during a turn is reported once (to open its diff); a turn start is reported", async () => {
  const a = makeAgent(tmp());
  const diff = { type: "diff", path: "/w/a.txt", oldText: "old", newText: "new" };
  await a.main.send(
    script(
      { update: { sessionUpdate: "tool_call", toolCallId: "e1", title: "Edit", kind: "edit", status: "in_progress", content: [diff] } },
      { update: { sessionUpdate: "tool_call_update", toolCallId: "e1", status: "completed" } },
      { update: { sessionUpdate: "tool_call_update", toolCallId: "e1", status: "completed", title: "Edited" } },
      { update: { sessionUpdate: "tool_call", toolCallId: "e2", title: "Edit", kind: "edit", status: "failed", content: [diff] } },
    ),
  );
  assert.deepEqual(edits, [diff], "the completed edit once; the failed one not");
  assert.equal(turnsStarted, 1, "the turn's start is reported (the old highlights go)");
});

test("a window reload: a chat comes back with its session (session/load, history replayed) and its queue, which is not sent", async () => {
  const replay = [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: "asked before the reload" } }, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "answered before the reload" } }];
  const a = makeAgent(tmp(), scriptedArgs({ replay }));
  const image = { kind: "image" as const, id: "i1", name: "pasted image 1", mimeType: "image/png", data: "iVBOR" };
  const tab = a.openChat();
  assert.deepEqual(tab.persisted("file:///w"), { folder: "file:///w", queue: [] }, "a fresh chat keeps only its folder");
  await tab.restore({ folder: "file:///w", sessionId: "s-before", queue: [{ text: "waiting one", attachments: [image] }, { text: "waiting two", attachments: [] }] });
  assert.deepEqual((await receivedOf(a.connection!, "session/load")).map((p: { sessionId: string }) => p.sessionId), ["s-before"], "the session is reopened with session/load");
  assert.equal(tab.state.sessionId, "s-before", "the chat shows that session");
  assert.deepEqual(tab.state.items.filter((i) => i.kind === "user" || i.kind === "agent").map((i) => (i as { text: string }).text), ["asked before the reload", "answered before the reload"], "its history is replayed into the chat");
  assert.deepEqual(tab.queue.list.map((q) => [q.text, q.attachments]), [["waiting one", [image]], ["waiting two", []]], "the queued messages are queued again, attachments and all, in order");
  await sleep(100);
  assert.deepEqual(await receivedOf(a.connection!, "session/prompt"), [], "nothing queued is sent behind the user's back");
  assert.deepEqual(tab.persisted(), { sessionId: "s-before", queue: [{ text: "waiting one", attachments: [image] }, { text: "waiting two", attachments: [] }] }, "what is kept again is the session and the queue");
  await tab.send("after the reload");
  for (let i = 0; i < 250 && (await promptTexts(a)).length < 3; i++) await sleep(20);
  assert.deepEqual(await promptTexts(a), ["after the reload", "waiting one", "waiting two"], "a new message goes first; the queue follows when its turn ends");
});

test("a window reload: a chat already in use is not overwritten; without session/load only the queue comes back", async () => {
  const a = makeAgent(tmp(), scriptedArgs({ caps: { loadSession: false } }));
  await a.main.restore({ sessionId: "s-gone", queue: [{ text: "kept", attachments: [] }] });
  assert.deepEqual(await receivedOf(a.connection!, "session/load"), [], "an agent that cannot load sessions is not asked to");
  assert.equal(a.main.state.sessionId, undefined, "the chat starts empty");
  assert.deepEqual(a.main.queue.list.map((q) => q.text), ["kept"], "the queue is back");
  assert.deepEqual(a.main.persisted(), { queue: [{ text: "kept", attachments: [] }] }, "a session that was not reopened is not kept");
  const b = makeAgent(tmp());
  await b.main.send("in use");
  const id = b.main.state.sessionId;
  await b.main.restore({ sessionId: "s-old", queue: [] });
  assert.equal(b.main.state.sessionId, id, "a chat that has a session keeps it");
  assert.deepEqual(await receivedOf(b.connection!, "session/load"), [], "and loads nothing");
});

test("a window reload: a session that cannot be reopened leaves a notice and an empty chat", async () => {
  const a = makeAgent(tmp(), scriptedArgs({ exitOnInit: 3 }));
  await a.main.restore({ sessionId: "s-x", queue: [] });
  const notice = a.main.state.items.find((i) => i.kind === "notice") as { text: string; severity: string } | undefined;
  assert.match(notice?.text ?? "", /^Could not reopen the previous session: /, "the failure is shown");
  assert.equal(notice?.severity, "warning");
  assert.equal(a.main.state.sessionId, undefined, "no session is shown");
  assert.deepEqual(a.main.persisted(), { queue: [] }, "nothing is kept of it");
});

test("a model the server cannot reach: the chat's error names the folder server's config file and the setting", async () => {
  const a = makeAgent(tmp(), scriptedArgs(), { env: { ...process.env, OPENVAALA_CONFIG_DIR: "/cfg/ov" } });
  await a.main.send(script({ fail: "cannot reach the model at http://127.0.0.1:9/v1: connection refused" }));
  const notice = a.state.items.find((i) => i.kind === "notice") as { text: string; severity: string };
  assert.equal(notice.severity, "error");
  assert.match(notice.text, /^cannot reach the model at http:\/\/127\.0\.0\.1:9\/v1: connection refused\. Is the model server running\?/, "the server's error first");
  assert.match(notice.text, /base_url in \/cfg\/ov\/config\.yaml \(OpenVaala: Open Config Folder\)/, "then the config file the folder's server reads");
  assert.match(notice.text, /OPENVAALA_CONFIG_DIR in the "openvaala\.env" setting/, "and the setting that moves it");
});
