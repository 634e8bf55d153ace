// The chat view provider against the `vscode` stub and the scripted stand-in agent: each message
// from the webview does what the user asked (and reaches the server), the view model the webview
// gets, errors shown in the chat, and the webview's HTML.
import { test as nodeTest, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { ChatViewProvider } from "../src/vscode/chatView.js";
import { DiffContentProvider } from "../src/vscode/diff.js";
import { FolderAgent } from "../src/vscode/folderAgent.js";
import type { ToWebview, ViewModel } from "../src/core/webviewProtocol.js";
import { receivedOf, script, scriptedArgs } from "./scripted.js";
import { EXT_ROOT, waitUntil } from "./util.js";

// these tests wait on processes: a hang fails the test in 10 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 10_000 }, fn);

function tmp(prefix = "ovcv-") {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}
function folder(p: string, name = path.basename(p), index = 0) {
  return { uri: vscode.Uri.file(p), name, index } as vscode.WorkspaceFolder;
}

class FakeView {
  posted: ToWebview[] = [];
  shown: boolean[] = [];
  private receive: ((m: unknown) => void) | undefined;
  private disposeFn: (() => void) | undefined;
  webview = {
    options: {} as { enableScripts?: boolean; localResourceRoots?: vscode.Uri[] },
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
    asWebviewUri: (u: vscode.Uri) => vscode.Uri.from({ scheme: "vscode-resource", path: u.path }),
  };
  onDidDispose(fn: () => void) {
    this.disposeFn = fn;
    return new vscode.Disposable(() => {});
  }
  show(preserveFocus: boolean) {
    this.shown.push(preserveFocus);
  }
  send(m: unknown) {
    this.receive!(m);
  }
  dispose() {
    this.disposeFn?.();
  }
  lastModel(): ViewModel {
    const states = this.posted.filter((p) => p.type === "state");
    return (states[states.length - 1] as { model: ViewModel }).model;
  }
}

const agents = new Map<string, FolderAgent>();
let log: vscode.OutputChannel;

function setup(folders: vscode.WorkspaceFolder[], args = scriptedArgs()) {
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = folders;
  __test.setConfig("openvaala.path", process.execPath);
  __test.setConfig("openvaala.args", args);
  log = vscode.window.createOutputChannel("chat log");
  const diffs = new DiffContentProvider();
  const provider = new acp.McpOverAcpProvider();
  const agentFor = (f: vscode.WorkspaceFolder) => {
    const key = f.uri.toString();
    let a = agents.get(key);
    if (!a) {
      a = new FolderAgent(f, { extensionPath: EXT_ROOT, globalStoragePath: path.join(tmp(), "User", "globalStorage", "x"), secrets: {} as vscode.SecretStorage, log, mcpProvider: provider });
      agents.set(key, a);
    }
    return a;
  };
  const chat = new ChatViewProvider({ extensionUri: vscode.Uri.file("/ext"), agentFor, diffs, log });
  const view = new FakeView();
  return { chat, view, diffs, agentFor, resolve: (state?: unknown) => chat.resolveWebviewView(view as unknown as vscode.WebviewView, state === undefined ? undefined : ({ state } as vscode.WebviewViewResolveContext)) };
}

beforeEach(() => __test.reset());
afterEach(async () => {
  for (const a of agents.values()) {
    await a.stop();
    a.dispose();
  }
  agents.clear();
});

test("the webview: scripts only from the extension's dist/ and media/, with a nonce", async () => {
  const { view, resolve } = setup([]);
  resolve();
  assert.equal(view.webview.options.enableScripts, true, "scripts are enabled");
  assert.deepEqual(view.webview.options.localResourceRoots!.map((u) => u.fsPath), ["/ext/media", "/ext/dist"], "only media/ and dist/ can be loaded");
  const html = view.webview.html;
  const nonce = /script-src 'nonce-([0-9a-f]{32})'/.exec(html)?.[1];
  assert.ok(nonce, "the CSP allows scripts by a random nonce only");
  assert.match(html, new RegExp(`<script nonce="${nonce}" src="vscode-resource://[^"]*/ext/dist/webview.js"></script>`), "the webview script carries the nonce");
  assert.match(html, /<link href="vscode-resource:\/\/[^"]*\/ext\/media\/chat.css" rel="stylesheet">/, "the style sheet comes from media/");
  assert.match(html, /default-src 'none'; img-src vscode-webview:\/\/csp https: data:; style-src vscode-webview:\/\/csp;/, "nothing else loads");
  assert.match(html, /<div id="app"><\/div>/, "the app root is there");
  const other = setup([]);
  other.resolve();
  assert.notEqual(/nonce-([0-9a-f]+)/.exec(other.view.webview.html)?.[1], nonce, "each webview gets its own nonce");
});

test("without a folder: the view says to open one, and nothing starts", async () => {
  const { view, chat, resolve } = setup([]);
  resolve();
  const m = view.lastModel();
  assert.deepEqual(m.folders, [], "no folders");
  assert.equal(m.running, false);
  assert.deepEqual(m.chat.items, [], "an empty chat");
  assert.equal(m.chat.busy, false);
  view.send({ type: "send", text: "hello" });
  await waitUntil(() => view.lastModel().error, 2000, "an error in the view");
  assert.equal(view.lastModel().error, "Open a folder to chat with OpenVaala.", "sending without a folder asks for a folder");
  assert.equal(chat.currentAgent(), undefined, "no agent without a folder");
  view.send({ type: "showLog" });
  assert.deepEqual(__test.state.shownOutputs, ["chat log"], "Show log works without a folder");
  chat.reveal();
  assert.deepEqual(view.shown, [true], "reveal shows the view, keeping the focus where it is");
  view.dispose();
  chat.reveal();
  assert.ok(__test.state.executed.some((e) => e.command === "openvaala.chat.focus"), "reveal without a view focuses the view container");
});

test("the webview's messages reach the server; the view model follows", async () => {
  const dir = tmp();
  const modes = { currentModeId: "a", availableModes: [{ id: "a", name: "A" }, { id: "b", name: "B" }] };
  const configOptions = [{ id: "model", name: "Model", type: "select", currentValue: "x", options: [{ value: "x", name: "X" }, { value: "y", name: "Y" }] }];
  const sessions = [{ sessionId: "old", cwd: dir, title: "Old one" }];
  const { view, chat, resolve } = setup([folder(dir)], scriptedArgs({ session: { modes, configOptions }, sessions }));
  resolve();
  view.send({ type: "ready" });
  const a = chat.currentAgent()!;
  const conn = () => a.connection!;
  view.send({ type: "send", text: "hello" });
  await waitUntil(() => view.lastModel().chat.items.length === 2, 5000, "the answer in the view");
  const m = view.lastModel();
  assert.equal(m.running, true, "the view model says the server runs");
  assert.deepEqual(m.chat.items.map((i) => i.kind), ["user", "agent"], "the view shows the turn");
  assert.equal(m.supportsSessionList, true, "the view knows the server lists sessions");
  assert.equal(m.currentFolder, vscode.Uri.file(dir).toString(), "the view model names the current folder");
  assert.deepEqual(m.folders, [{ uri: vscode.Uri.file(dir).toString(), name: path.basename(dir) }], "the view model lists the folders");
  assert.equal(m.error, undefined, "no error");
  assert.deepEqual((await receivedOf(conn(), "session/prompt"))[0].prompt, [{ type: "text", text: "hello" }], "send -> session/prompt");
  const sessionId = a.state.sessionId;

  view.send({ type: "setMode", modeId: "b" });
  view.send({ type: "setConfig", configId: "model", value: "y" });
  view.send({ type: "listSessions" });
  await waitUntil(() => view.lastModel().sessions.length === 1, 5000, "the session list in the view");
  assert.deepEqual(await receivedOf(conn(), "session/set_mode"), [{ sessionId, modeId: "b" }], "setMode -> session/set_mode");
  assert.deepEqual(await receivedOf(conn(), "session/set_config_option"), [{ sessionId, configId: "model", value: "y" }], "setConfig -> session/set_config_option");
  assert.equal(view.lastModel().sessions[0]!.title, "Old one", "listSessions -> the sessions in the view model");

  view.send({ type: "newChat" });
  await waitUntil(() => a.state.sessionId !== sessionId, 5000, "a new session");
  assert.equal((await receivedOf(conn(), "session/new")).length, 2, "newChat -> session/new");
  view.send({ type: "loadSession", sessionId: "old" });
  await waitUntil(() => a.state.sessionId === "old", 5000, "the loaded session");
  assert.equal((await receivedOf(conn(), "session/load"))[0].sessionId, "old", "loadSession -> session/load");

  const turn = a.prompt(script({ request: "session/request_permission", params: { sessionId: "old", toolCall: { toolCallId: "t" }, options: [{ optionId: "ok", name: "OK", kind: "allow_once" }] } }, { waitCancel: true }));
  await waitUntil(() => a.state.permissions.perm1, 5000, "a permission prompt");
  view.send({ type: "permission", requestId: "perm1", optionId: "ok" });
  await waitUntil(() => a.state.permissions.perm1!.outcome === "ok", 2000, "the answer");
  view.send({ type: "stop" });
  await turn;
  assert.deepEqual(await receivedOf(conn(), "session/cancel"), [{ sessionId: "old" }], "stop -> session/cancel");
});

test("the view's Stop button shows only while a turn runs (the openvaala.busy context key)", async () => {
  const dir = tmp();
  const { view, chat, resolve } = setup([folder(dir)]);
  resolve();
  const busy = () => __test.state.executed.filter((e) => e.command === "setContext" && e.args[0] === "openvaala.busy").map((e) => e.args[1]);
  const pkg = JSON.parse(fs.readFileSync(path.join(EXT_ROOT, "package.json"), "utf8"));
  const stopMenu = pkg.contributes.menus["view/title"].find((m: { command: string }) => m.command === "openvaala.stop");
  assert.match(stopMenu.when, /&& openvaala\.busy\b/, "the Stop button of the view title needs openvaala.busy");
  assert.deepEqual(busy(), [false], "idle at first");
  const a = chat.currentAgent()!;
  const turn = a.prompt(script({ waitCancel: true }));
  await waitUntil(() => busy().at(-1) === true, 5000, "openvaala.busy to be set during the turn");
  await a.cancel();
  await turn;
  await waitUntil(() => busy().at(-1) === false, 5000, "openvaala.busy to be cleared after the turn");
  void view;
});

test("copyText from a code block's Copy button goes to the clipboard", async () => {
  const { view, resolve } = setup([folder(tmp())]);
  resolve();
  view.send({ type: "copyText", text: "npm test" });
  await waitUntil(() => (vscode.env as unknown as { clipboard: { text: string } }).clipboard.text === "npm test", 2000, "the clipboard to hold the code");
});

test("errors of an action are shown in the view and logged; the next action clears them", async () => {
  const dir = tmp();
  const { view, chat, resolve } = setup([folder(dir)]);
  resolve();
  __test.setConfig("openvaala.path", path.join(dir, "no-such-binary"));
  view.send({ type: "newChat" });
  await waitUntil(() => view.lastModel().error, 5000, "an error");
  assert.match(view.lastModel().error!, /^Could not start a new chat: Could not find the openvaala binary/, "the error names the action and the cause");
  assert.match((__test.state.outputs.get("chat log") ?? []).join(""), /\[openvaala-vscode\] Could not start a new chat: Could not find/, "the error is logged");
  __test.setConfig("openvaala.path", process.execPath);
  view.send({ type: "send", text: "hi" });
  await waitUntil(() => chat.currentAgent()!.state.items.length === 2, 5000, "the answer");
  await waitUntil(() => view.lastModel().error === undefined, 2000, "the error to clear");
});

test("a message that cannot be sent (server fails to start) says so in words and goes back into the input", async () => {
  const dir = tmp();
  const { view, resolve } = setup([folder(dir)]);
  resolve();
  __test.setConfig("openvaala.path", path.join(dir, "no-such-binary"));
  view.send({ type: "send", text: "explain this repo" });
  await waitUntil(() => view.lastModel().error, 5000, "an error");
  assert.match(view.lastModel().error!, /^Could not send your message: Could not find the openvaala binary/, "the error says what failed, without an internal prefix");
  assert.ok(view.posted.some((m) => m.type === "restoreInput" && m.text === "explain this repo"), "the typed message is handed back to the input");
});

test("which folder the chat talks to: the chosen one, else the active editor's, else the first", async () => {
  const a = tmp();
  const b = tmp();
  const fa = folder(a, "a", 0);
  const fb = folder(b, "b", 1);
  const { view, chat, resolve } = setup([fa, fb]);
  assert.equal(chat.currentFolder(), fa, "the first folder by default");
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = { document: { uri: vscode.Uri.file(path.join(b, "x.ts")) } };
  const fresh = setup([fa, fb]);
  assert.equal(fresh.chat.currentFolder(), fb, "the active editor's folder when none was chosen");
  assert.equal(fresh.chat.currentFolder(), fb);
  resolve();
  view.send({ type: "selectFolder", uri: fb.uri.toString() });
  assert.equal(chat.currentFolder(), fb, "a chosen folder wins");
  assert.equal(view.lastModel().currentFolder, fb.uri.toString(), "the view shows the chosen folder");
  (vscode.window as { activeTextEditor: unknown }).activeTextEditor = { document: { uri: vscode.Uri.file(path.join(a, "y.ts")) } };
  chat.refresh();
  assert.equal(chat.currentFolder(), fb, "the chosen folder stays chosen when the editor changes");
  // the view follows the chosen folder's agent
  const agentB = chat.currentAgent()!;
  const before = view.posted.length;
  await agentB.newChat();
  await waitUntil(() => view.posted.length > before, 2000, "a state after the agent changed");
  chat.dispose();
  const after = view.posted.length;
  await agentB.newChat();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(view.posted.length, after, "a disposed view no longer follows the agent");
});

test("openLocation, openDiff, showTerminal and focusInput", async () => {
  const dir = tmp();
  const file = path.join(dir, "a.txt");
  fs.writeFileSync(file, "1\n2\n3\n");
  const { view, chat, resolve } = setup([folder(dir)]);
  resolve();
  await chat.onMessage({ type: "openLocation", path: file, line: 3 });
  await chat.onMessage({ type: "openLocation", path: file });
  const [at3, at1] = __test.state.shownDocuments;
  assert.equal(at3.doc.uri.fsPath, file, "the location's file is opened");
  assert.deepEqual([at3.opts.selection.start.line, at3.opts.selection.start.character, at3.opts.selection.end.line], [2, 0, 2], "at its (1-based) line");
  assert.equal(at3.opts.preview, true, "in a preview editor");
  assert.equal(at1.opts.selection.start.line, 0, "a location without a line opens at the top");

  const a = chat.currentAgent()!;
  await a.prompt(script({ update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit a", kind: "edit", status: "completed", content: [{ type: "content", content: { type: "text", text: "x" } }, { type: "diff", path: file, oldText: "old", newText: "new" }, { type: "diff", path: file, newText: "created" }] } }));
  await chat.onMessage({ type: "openDiff", toolCallId: "t1", index: 1 });
  const diff = __test.state.executed.find((e) => e.command === "vscode.diff")!;
  assert.ok(diff, "Open diff opens VS Code's diff editor");
  const [left, right, title, opts] = diff.args;
  assert.equal(title, "a.txt: Edit a", "the diff is titled with the file and the tool call");
  assert.deepEqual(opts, { preview: true });
  assert.equal(left.scheme, "openvaala-diff");
  assert.equal(left.path, file, "the diff shows the edited file's path");
  const provider = (chat as unknown as { deps: { diffs: DiffContentProvider } }).deps.diffs;
  assert.equal(provider.provideTextDocumentContent(left), "old", "the left side is the old text");
  assert.equal(provider.provideTextDocumentContent(right), "new", "the right side is the new text");
  await chat.onMessage({ type: "openDiff", toolCallId: "t1", index: 2 });
  const created = __test.state.executed.filter((e) => e.command === "vscode.diff")[1]!;
  assert.equal(provider.provideTextDocumentContent(created.args[0]), "", "a new file diffs against empty text");
  const n = __test.state.executed.length;
  await chat.onMessage({ type: "openDiff", toolCallId: "t1", index: 0 });
  await chat.onMessage({ type: "openDiff", toolCallId: "nope", index: 0 });
  assert.equal(__test.state.executed.length, n, "no diff for content that is not a diff, or an unknown tool call");

  const sessionId = a.state.sessionId!;
  await a.prompt(script({ request: "terminal/create", params: { sessionId, command: "true" } }));
  await chat.onMessage({ type: "showTerminal", terminalId: "term-1" });
  assert.equal(__test.state.terminals[0].shown, 1, "showTerminal shows the VS Code terminal");
  chat.focusInput();
  assert.deepEqual(view.posted[view.posted.length - 1], { type: "focusInput" }, "focusInput is passed to the webview");
  await waitUntil(() => view.lastModel().terminals[0]?.id === "term-1", 2000, "the view model to carry the terminals");
});

const persisted = (v: FakeView) => v.posted.filter((p) => p.type === "persist").map((p) => (p as { state: unknown }).state);

test("the webview keeps what outlives a window reload: the chat's folder, session and queue, posted when they change, not per chunk", async () => {
  const dir = tmp();
  const f = folder(dir);
  const { view, resolve } = setup([f]);
  resolve();
  const uri = f.uri.toString();
  assert.deepEqual(persisted(view), [{ folder: uri, queue: [] }], "a fresh chat keeps its folder");
  view.send({ type: "send", text: script({ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } } }, { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "b" } } }, { sleep: 300 }) });
  await waitUntil(() => view.lastModel().chat.busy, 5000, "the turn");
  view.send({ type: "send", text: "queued" });
  await waitUntil(() => !view.lastModel().chat.busy && view.lastModel().chat.items.some((i) => i.kind === "user" && (i as { text: string }).text === "queued") && !view.lastModel().chat.busy, 5000, "the queued message sent");
  const sessionId = view.lastModel().chat.sessionId;
  assert.deepEqual(persisted(view), [
    { folder: uri, queue: [] },
    { folder: uri, sessionId, queue: [] },
    { folder: uri, sessionId, queue: [{ text: "queued", attachments: [] }] },
    { folder: uri, sessionId, queue: [] },
  ], "one save per change of session or queue, none for the streamed chunks");
});

test("after a window reload the side bar brings back its chat: the saved folder's session and queue", async () => {
  const a = tmp();
  const b = tmp();
  const { view, chat, agentFor, resolve } = setup([folder(a), folder(b)], scriptedArgs({ replay: [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "from before" } }] }));
  resolve({ folder: folder(b).uri.toString(), sessionId: "s-prev", queue: [{ text: "still queued", attachments: [] }] });
  assert.equal(chat.currentFolder()?.uri.fsPath, b, "the chat of the saved folder is shown");
  const main = agentFor(folder(b)).main;
  await waitUntil(() => main.state.sessionId === "s-prev" && main.state.items.length > 0, 5000, "the session reopened");
  assert.deepEqual(view.lastModel().queue.map((q) => q.text), ["still queued"], "the queue is shown again");
  assert.equal(view.lastModel().chat.busy, false, "and not sent");
  const again = setup([folder(a)]);
  again.resolve({ folder: folder(b).uri.toString(), sessionId: "s-prev", queue: [{ text: "x", attachments: [] }] });
  assert.equal(again.chat.currentFolder()?.uri.fsPath, a, "a saved folder no longer open is not restored");
  assert.deepEqual(again.agentFor(folder(a)).main.queue.list, [], "nor its queue");
  const junk = setup([folder(a)]);
  junk.resolve("not a chat");
  assert.deepEqual(junk.agentFor(folder(a)).main.queue.list, [], "a state that is not a chat restores nothing");
});
