// The chat webviews (side bar view and editor tab) against stand-in agents (test/fakeAgent.ts): no
// server process, so each test can say exactly what the server answers and check what the webview
// is sent, what VS Code is asked to do and what reaches the server.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { ChatPanel, ChatViewProvider, type ChatViewDeps } from "../src/vscode/chatView.js";
import { DiffContentProvider } from "../src/vscode/diff.js";
import type { ToWebview, ViewModel } from "../src/core/webviewProtocol.js";
import { FakeAgent } from "./fakeAgent.js";

function tmp() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovcw-")));
}
function folder(p: string, index = 0) {
  return { uri: vscode.Uri.file(p), name: path.basename(p), index } as vscode.WorkspaceFolder;
}

class FakeView {
  posted: ToWebview[] = [];
  private receive: ((m: unknown) => void) | undefined;
  webview = {
    options: {},
    html: "",
    cspSource: "vscode-webview://csp",
    onDidReceiveMessage: (fn: (m: unknown) => void) => {
      this.receive = fn;
      return new vscode.Disposable(() => {});
    },
    postMessage: async (m: ToWebview) => {
      this.posted.push(m);
      return true;
    },
    asWebviewUri: (u: vscode.Uri) => u,
  };
  private disposeFn: (() => void) | undefined;
  onDidDispose(fn: () => void) {
    this.disposeFn = fn;
    return new vscode.Disposable(() => {});
  }
  show() {}
  dispose() {
    this.disposeFn?.();
  }
  of<T extends ToWebview["type"]>(type: T) {
    return this.posted.filter((p) => p.type === type) as Extract<ToWebview, { type: T }>[];
  }
  lastModel(): ViewModel {
    return this.of("state").at(-1)!.model;
  }
}

function setup(folders: vscode.WorkspaceFolder[] | undefined, deps: Partial<ChatViewDeps> = {}) {
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = folders;
  const agents = new Map<string, FakeAgent>();
  const agent = (f: vscode.WorkspaceFolder) => {
    const key = f.uri.toString();
    if (!agents.has(key)) agents.set(key, new FakeAgent(f));
    return agents.get(key)!;
  };
  const log = vscode.window.createOutputChannel("chat log");
  const diffs = new DiffContentProvider();
  const chat = new ChatViewProvider({ extensionUri: vscode.Uri.file("/ext"), agentFor: (f) => agent(f).asFolderAgent(), diffs, log, ...deps });
  const view = new FakeView();
  const resolve = (state?: unknown, v = view) => chat.resolveWebviewView(v as unknown as vscode.WebviewView, state === undefined ? undefined : ({ state } as vscode.WebviewViewResolveContext));
  return { chat, view, agent, diffs, resolve };
}
const tick = () => new Promise((r) => setImmediate(r));
const editCall = (id: string, file: string, oldText: string | undefined, newText: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call",
  toolCallId: id,
  title: `Edit ${id}`,
  kind: "edit",
  status: "completed",
  content: [{ type: "diff", path: file, ...(oldText === undefined ? {} : { oldText }), newText }],
});

beforeEach(() => __test.reset());

test("a window without any workspace: an empty chat, no folders, and a saved chat is not brought back", async () => {
  const { chat, view, resolve } = setup(undefined);
  resolve({ folder: "file:///gone", sessionId: "s-prev", queue: [{ text: "x", attachments: [] }] });
  const m = view.lastModel();
  assert.deepEqual(m.folders, [], "no folders to pick");
  assert.equal(m.currentFolder, undefined);
  assert.deepEqual(m.chat, { items: [], toolCalls: {}, permissions: {}, plan: [], configOptions: [], commands: [], busy: false, nextId: 1, rev: 0 }, "an empty chat: no items, plan, options or commands");
  assert.deepEqual([m.sessions, m.terminals, m.queue], [[], [], []], "no sessions, terminals or queued messages");
  assert.equal(m.inTab, false, "the side bar view knows it is not a tab (it has the folder picker)");
  assert.equal(chat.currentFolder(), undefined);
});

test("the side bar asks for the state again when the webview (re)loads, and tells it to focus the input, even before it is shown", async () => {
  const { chat, view, resolve } = setup([folder(tmp())]);
  chat.focusInput(); // New Chat before the view was ever shown: nothing to tell yet
  assert.deepEqual(view.posted, []);
  resolve();
  view.posted.length = 0;
  await chat.onMessage({ type: "ready" });
  assert.equal(view.of("state").length, 1, "a webview that (re)loaded gets the current state");
  chat.focusInput();
  assert.deepEqual(view.posted.at(-1), { type: "focusInput" });
  view.dispose();
  chat.focusInput();
  await chat.onMessage({ type: "openSessionInTab", sessionId: "s" }); // no openInTab: nothing happens
});

test("Show log keeps the focus in the chat", async () => {
  const { chat, resolve } = setup([folder(tmp())]);
  resolve();
  await chat.onMessage({ type: "showLog" });
  assert.deepEqual(__test.state.outputShows, [{ name: "chat log", preserveFocus: true }], "the log is shown without taking the focus");
});

test("@ / Attach file: a quick pick of the folder's files, nearest first; the picked file is attached; a dismissed pick refocuses the input", async () => {
  const dir = tmp();
  for (const f of ["z.ts", "b.ts", "sub/deeper/c.ts", "sub/a.ts", "sub/b.ts", "Aaa/x.ts"]) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f), "");
  }
  const { chat, view, resolve } = setup([folder(dir)]);
  resolve();
  __test.state.quickPickChoices.push((items) => items.find((i: { label: string; description?: string }) => i.label === "a.ts"));
  await chat.onMessage({ type: "pickFile" });
  const [pick] = __test.state.quickPicks;
  assert.deepEqual(pick!.items.map((i: { label: string; description?: string }) => [i.label, i.description]), [
    ["b.ts", undefined],
    ["z.ts", undefined],
    ["x.ts", "Aaa"],
    ["a.ts", "sub"],
    ["b.ts", "sub"],
    ["c.ts", path.join("sub", "deeper")],
  ], "files by folder (the top folder first), then by name; the folder is the description");
  assert.deepEqual(__test.state.findFiles.map((c) => [c.pattern, c.max]), [["**/*", 5000]], "every file of the folder, at most 5000");
  assert.deepEqual(pick!.opts, { title: "Attach a file to the message", placeHolder: "Type to search the workspace files", matchOnDescription: true }, "searchable by folder too");
  const attach = view.of("attach");
  assert.equal(attach.length, 1, "the picked file is attached");
  const a = attach[0]!.attachment as { kind: string; id: string; path: string; name: string };
  assert.deepEqual({ kind: a.kind, path: a.path, name: a.name }, { kind: "file", path: path.join(dir, "sub", "a.ts"), name: path.join("sub", "a.ts") }, "named by its path in the folder");
  assert.match(a.id, new RegExp(`^f\\d+-${path.join(dir, "sub", "a.ts").replace(/[/\\.]/g, "\\$&")}$`), "with an id of its own");

  view.posted.length = 0;
  __test.state.quickPickChoices.push(() => undefined);
  await chat.onMessage({ type: "pickFile" });
  assert.deepEqual(view.posted, [{ type: "focusInput" }], "a dismissed pick attaches nothing and gives the input the focus back");

  const none = setup([]);
  none.resolve();
  none.view.posted.length = 0;
  await none.chat.onMessage({ type: "pickFile" });
  assert.equal(__test.state.quickPicks.length, 2, "without a folder there is nothing to pick from");
  assert.deepEqual(none.view.posted, [{ type: "focusInput" }]);
});

test("queued messages: shown with their attachments' names; removed, taken back into the input, or sent now when no turn runs", async () => {
  const dir = tmp();
  const f = folder(dir);
  const { chat, view, agent, resolve } = setup([f]);
  const file = { kind: "file" as const, id: "f1", path: path.join(dir, "notes.md"), name: "notes.md" };
  resolve({ folder: f.uri.toString(), queue: [{ text: "one", attachments: [file] }, { text: "two", attachments: [] }, { text: "three", attachments: [] }] });
  const conn = agent(f).conn;
  const queue = view.lastModel().queue;
  assert.deepEqual(queue.map((q) => [q.text, q.attachments]), [["one", ["notes.md"]], ["two", []], ["three", []]], "the queue is shown, attachments by name");
  assert.deepEqual(conn.calls, [], "a restored queue is not sent by itself");

  await chat.onMessage({ type: "unqueue", id: queue[0]!.id, edit: true });
  assert.deepEqual(view.of("restoreInput"), [{ type: "restoreInput", text: "one", attachments: [file] }], "Edit puts the message back into the input");
  await chat.onMessage({ type: "unqueue", id: queue[1]!.id });
  assert.equal(view.of("restoreInput").length, 1, "Remove just drops it");
  assert.deepEqual(view.lastModel().queue.map((q) => q.text), ["three"]);
  await chat.onMessage({ type: "unqueue", id: "no-such", edit: true });
  assert.equal(view.of("restoreInput").length, 1, "an unknown entry restores nothing");

  let finish!: (r: acp.PromptResponse) => void;
  conn.answers.prompt = () => new Promise((r) => (finish = r));
  const running = agent(f).main.prompt("busy");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(view.lastModel().chat.busy, true);
  await chat.onMessage({ type: "sendQueued", id: queue[2]!.id });
  assert.deepEqual(view.lastModel().queue.map((q) => q.text), ["three"], "Send now during a turn leaves it queued");
  assert.equal(view.lastModel().error, undefined, "and is no error");
  finish({ stopReason: "cancelled" }); // stopped: the queue waits for the user
  await running;
  assert.deepEqual(view.lastModel().queue.map((q) => q.text), ["three"]);
  conn.answers.prompt = undefined;
  await chat.onMessage({ type: "sendQueued", id: queue[2]!.id });
  assert.deepEqual(conn.of("prompt").map((p) => p[1]), ["busy", "three"], "Send now when idle sends it");
  assert.deepEqual(view.lastModel().queue, [], "and takes it out of the queue");
  assert.equal(view.of("restoreInput").length, 1, "a message sent fine is not handed back to the input");
});

test("a message that could not be sent goes back into the input as it was", async () => {
  const f = folder(tmp());
  const { chat, view, agent, resolve } = setup([f]);
  resolve();
  agent(f).conn.answers.newSession = async () => {
    throw new Error("no model configured");
  };
  await chat.onMessage({ type: "send", text: "hello" });
  assert.equal(view.lastModel().error, "Could not send your message: no model configured");
  assert.deepEqual(view.of("restoreInput"), [{ type: "restoreInput", text: "hello", attachments: [] }], "the text, with no attachments");
  agent(f).conn.answers.newSession = undefined;
  await chat.onMessage({ type: "send", text: "hello again" });
  assert.equal(view.lastModel().error, undefined, "the next message goes through");
  assert.equal(view.of("restoreInput").length, 1, "and is not handed back");

  // Send now of a queued message fails the same way
  await agent(f).main.restore({ queue: [{ text: "queued", attachments: [] }] });
  agent(f).conn.answers.prompt = async () => {
    throw new Error("unreachable");
  };
  agent(f).conn.isRunning = false;
  agent(f).conn.answers.newSession = async () => {
    throw new Error("server gone");
  };
  await chat.onMessage({ type: "sendQueued", id: view.lastModel().queue[0]!.id });
  assert.equal(view.lastModel().error, "Could not send your message: server gone");
});

test("Copy of a code block puts the code on the clipboard", async () => {
  const { chat, resolve } = setup([folder(tmp())]);
  resolve();
  await chat.onMessage({ type: "copyText", text: "make -j2" });
  assert.equal((vscode.env as unknown as { clipboard: { text: string } }).clipboard.text, "make -j2");
});

test("a webview that (re)loads keeps the folder the user chose", async () => {
  const a = tmp();
  const b = tmp();
  const { chat, view, resolve } = setup([folder(a), folder(b, 1)]);
  resolve();
  await chat.onMessage({ type: "selectFolder", uri: folder(b).uri.toString() });
  await chat.onMessage({ type: "ready" });
  assert.equal(view.lastModel().currentFolder, folder(b).uri.toString());
  assert.equal(chat.currentFolder()?.uri.fsPath, b);
});

test("a session that could not be reopened after a reload is not tried again when the view is resolved again", async () => {
  const f = folder(tmp());
  const { agent, resolve } = setup([f]);
  agent(f).conn.answers.loadSession = async () => {
    throw new Error("session expired");
  };
  resolve({ folder: f.uri.toString(), sessionId: "s-prev", queue: [] });
  await new Promise((r) => setTimeout(r, 20));
  resolve({ folder: f.uri.toString(), sessionId: "s-prev", queue: [] }, new FakeView());
  await new Promise((r) => setTimeout(r, 20));
  const main = agent(f).main;
  assert.deepEqual(agent(f).conn.of("loadSession").map((l) => l[0]), ["s-prev"], "one attempt");
  assert.deepEqual(main.state.items.map((i) => (i as { text?: string }).text), ["Could not reopen the previous session: session expired"], "one notice");
});

test("each action's failure is shown above the input, naming the action", async () => {
  const f = folder(tmp());
  const { chat, view, agent, resolve } = setup([f]);
  resolve();
  const a = agent(f);
  await a.main.newChat();
  const fail = (why: string) => async () => {
    throw new Error(why);
  };
  a.conn.answers.cancel = fail("cancel refused");
  a.conn.answers.setMode = fail("no such mode");
  a.conn.answers.setConfigOption = fail("bad value");
  a.conn.answers.loadSession = fail("unknown session");
  a.listSessionsAnswer = fail("list failed");
  const errors: (string | undefined)[] = [];
  for (const m of [{ type: "stop" }, { type: "setMode", modeId: "x" }, { type: "setConfig", configId: "c", value: "v" }, { type: "listSessions" }, { type: "loadSession", sessionId: "old" }] as const) {
    await chat.onMessage(m);
    errors.push(view.lastModel().error);
  }
  assert.deepEqual(errors, [
    "Could not stop: cancel refused",
    "Could not change the mode: no such mode",
    "Could not change the setting: bad value",
    "Could not list the previous sessions: list failed",
    "Could not open the session: unknown session",
  ]);
  assert.match((__test.state.outputs.get("chat log") ?? []).join(""), /\[openvaala-vscode\] Could not change the mode: no such mode/, "and logged");
});

test("History: a session open in another chat is shown there; the session this chat shows is loaded again here", async () => {
  const f = folder(tmp());
  const asked: string[] = [];
  const { chat, agent, resolve } = setup([f], { showOpenSession: (id) => (asked.push(id), true) });
  resolve();
  const a = agent(f);
  await a.main.newChat();
  await chat.onMessage({ type: "loadSession", sessionId: "elsewhere" });
  assert.deepEqual(asked, ["elsewhere"], "another chat that has it is asked to show it");
  assert.deepEqual(a.conn.of("loadSession"), [], "and it is not loaded a second time");
  await chat.onMessage({ type: "loadSession", sessionId: "s1" });
  assert.deepEqual(asked, ["elsewhere"], "the chat's own session is not looked for elsewhere");
  assert.deepEqual(a.conn.of("loadSession").map((l) => l[0]), ["s1"], "it is reloaded");
});

test("the files a turn changed: Open diff shows before and after; Undo puts them back", async () => {
  const dir = tmp();
  const f = folder(dir);
  const { chat, view, agent, diffs, resolve } = setup([f]);
  resolve();
  const main = agent(f).main;
  const edited = path.join(dir, "a.txt");
  const created = path.join(dir, "new.txt");
  fs.writeFileSync(edited, "after\n");
  fs.writeFileSync(created, "made\n");
  main.emit({ type: "turnStarted" });
  main.onUpdate(editCall("e1", edited, "before\n", "after\n"));
  main.onUpdate(editCall("e2", created, undefined, "made\n"));
  main.emit({ type: "turnEnded", stopReason: "end_turn" });
  const item = view.lastModel().chat.items.find((i) => i.kind === "changes")!;
  assert.ok(item, "the turn's changes are listed");

  await chat.onMessage({ type: "openChangeDiff", itemId: item.id, path: edited });
  await chat.onMessage({ type: "openChangeDiff", itemId: item.id, path: created });
  await chat.onMessage({ type: "openChangeDiff", itemId: item.id, path: path.join(dir, "other.txt") });
  await chat.onMessage({ type: "openChangeDiff", itemId: "nope", path: edited });
  const opened = __test.state.executed.filter((e) => e.command === "vscode.diff");
  assert.equal(opened.length, 2, "a diff per changed file; none for a file or item that is not there");
  const [l, r, title] = opened[0]!.args;
  assert.equal(title, "a.txt: changes of the turn", "titled as the turn's changes");
  assert.deepEqual([diffs.provideTextDocumentContent(l), diffs.provideTextDocumentContent(r)], ["before\n", "after\n"], "the text before the turn against after it");
  assert.equal(diffs.provideTextDocumentContent(opened[1]!.args[0]), "", "a file the turn created diffs against nothing");

  await chat.onMessage({ type: "undoTurn", itemId: item.id });
  assert.equal(fs.readFileSync(edited, "utf8"), "before\n", "Undo restores the edited file");
  assert.equal(fs.existsSync(created), false, "and deletes the created one");
  const undone = view.lastModel().chat.items.find((i) => i.id === item.id) as { undo?: { result: string }[] };
  assert.deepEqual(undone.undo?.map((u) => u.result), ["restored", "deleted"], "the view shows what was undone");
});

test("after a window reload: restored once, into the saved folder or (none saved) the current one, never over a chat that started meanwhile", async () => {
  const a = tmp();
  const b = tmp();
  const { chat, agent, resolve } = setup([folder(a), folder(b, 1)]);
  const saved = { queue: [{ text: "queued before", attachments: [] }] };
  resolve(saved);
  assert.deepEqual(agent(folder(a)).main.queue.list.map((q) => q.text), ["queued before"], "a state without a folder comes back in the current folder's chat");
  resolve(saved, new FakeView());
  assert.equal(agent(folder(a)).main.queue.list.length, 1, "a view resolved again (moved, reopened) does not restore a second time");
  void chat;

  const busy = setup([folder(a)]);
  await busy.agent(folder(a)).main.newChat();
  busy.resolve({ folder: folder(a).uri.toString(), sessionId: "s-prev", queue: [{ text: "stale", attachments: [] }] });
  const main = busy.agent(folder(a)).main;
  assert.equal(main.state.sessionId, "s1", "a chat started before the view was shown keeps its session");
  assert.deepEqual(main.queue.list, [], "and gets no stale queue");
  assert.deepEqual(busy.agent(folder(a)).conn.of("loadSession"), []);
});

test("the side bar follows folder changes, and sets the busy context only when it changes", async () => {
  const a = tmp();
  const b = tmp();
  const { chat, view, resolve } = setup([folder(a)]);
  resolve();
  await chat.onMessage({ type: "ready" });
  await chat.onMessage({ type: "ready" });
  const busy = () => __test.state.executed.filter((e) => e.command === "setContext" && e.args[0] === "openvaala.busy").map((e) => e.args[1]);
  assert.deepEqual(busy(), [false], "set once, not on every redraw");
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = [folder(a), folder(b, 1)];
  chat.refresh();
  assert.deepEqual(view.lastModel().folders.map((x) => x.name), [path.basename(a), path.basename(b)], "a folder added shows in the picker");
});

test("a chat tab: titled by its session, no folder picker, revealed without taking the focus, its chat closed with it", async () => {
  const f = folder(tmp());
  const agent = new FakeAgent(f);
  const panel = vscode.window.createWebviewPanel(ChatPanel.viewType, ChatPanel.DEFAULT_TITLE, vscode.ViewColumn.Active, {}) as unknown as vscode.WebviewPanel & { posted: ToWebview[]; reveals: unknown[]; dispose(): void };
  const closed: ChatPanel[] = [];
  const p = new ChatPanel({ extensionUri: vscode.Uri.file("/ext"), agentFor: () => agent.asFolderAgent(), diffs: new DiffContentProvider(), log: vscode.window.createOutputChannel("l") }, agent.asFolderAgent(), panel, (c) => closed.push(c));
  const last = () => (panel.posted.filter((m) => m.type === "state").at(-1) as { model: ViewModel }).model;
  assert.deepEqual(last().folders, [], "a tab has no folder list");
  assert.equal(last().inTab, true);
  assert.equal(panel.title, "OpenVaala Chat");
  p.session.onUpdate({ sessionUpdate: "session_info_update", title: "Fix the parser" });
  assert.equal(panel.title, "OpenVaala: Fix the parser", "the tab is titled by its session");
  p.session.onUpdate({ sessionUpdate: "session_info_update", title: null });
  assert.equal(panel.title, "OpenVaala Chat", "back to the default title without one");
  p.reveal();
  assert.deepEqual(panel.reveals, [{ column: undefined, preserveFocus: true }], "shown where it is, the focus left alone");
  panel.dispose();
  await tick();
  assert.deepEqual(agent.closed, [p.session], "closing the tab closes its chat");
  assert.deepEqual(closed, [p]);
});

test("a tab closed while its action still runs: the action ends quietly (a closed tab's title is not touched)", async () => {
  const f = folder(tmp());
  const agent = new FakeAgent(f);
  const panel = vscode.window.createWebviewPanel(ChatPanel.viewType, ChatPanel.DEFAULT_TITLE, vscode.ViewColumn.Active, {}) as unknown as vscode.WebviewPanel & { dispose(): void };
  const p = new ChatPanel({ extensionUri: vscode.Uri.file("/ext"), agentFor: () => agent.asFolderAgent(), diffs: new DiffContentProvider(), log: vscode.window.createOutputChannel("l") }, agent.asFolderAgent(), panel, () => {});
  p.session.onUpdate({ sessionUpdate: "session_info_update", title: "Old topic" });
  assert.equal(panel.title, "OpenVaala: Old topic");
  let answer!: (r: acp.NewSessionResponse) => void;
  agent.conn.answers.newSession = () => new Promise((r) => (answer = r));
  const running = p.onMessage({ type: "newChat" });
  await tick();
  panel.dispose();
  answer({ sessionId: "s-new" });
  await running;
  assert.equal(p.session.state.sessionId, "s-new");
});

test("each new session of the side bar's chat is saved for a window reload", async () => {
  const f = folder(tmp());
  const { chat, view, resolve } = setup([f]);
  resolve();
  await chat.onMessage({ type: "newChat" });
  await chat.onMessage({ type: "newChat" });
  assert.deepEqual(view.of("persist").map((m) => m.state.sessionId), [undefined, "s1", "s2"], "the first session, then the next");
});
