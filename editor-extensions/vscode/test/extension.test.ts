// The extension's palette commands and lifecycle against the `vscode` stub, with the scripted
// stand-in agent as the server: what each command shows the user and does.
import { test as nodeTest, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import { __test } from "./stubs/vscode.js";
import { activate, deactivate, configRoot, COMMANDS, type ExtensionApi } from "../src/vscode/extension.js";
import { receivedOf, script, scriptedArgs } from "./scripted.js";
import { EXT_ROOT, waitUntil } from "./util.js";

// these tests wait on processes: a hang fails the test in 10 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 10_000 }, fn);

function tmp(prefix = "ovext-") {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}
function folder(p: string, name = path.basename(p)) {
  return { uri: vscode.Uri.file(p), name, index: 0 } as vscode.WorkspaceFolder;
}

function fakeContext(version?: string) {
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extensionUri: vscode.Uri.file(EXT_ROOT),
    globalStorageUri: vscode.Uri.file(path.join(tmp(), "User", "globalStorage", "openvaala.openvaala")),
    secrets: { get: async () => undefined, store: async () => {}, delete: async () => {} },
    extension: version ? { packageJSON: { version } } : undefined,
  } as unknown as vscode.ExtensionContext;
}

const run = (id: string, ...args: unknown[]) => __test.state.commands.get(id)!(...args);
const messages = (level: string) => __test.state.messages.filter((m) => m.level === level).map((m) => m.text);

async function withExtension(folders: vscode.WorkspaceFolder[], fn: (api: ExtensionApi, ctx: vscode.ExtensionContext) => Promise<void>, version?: string) {
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = folders;
  __test.setConfig("openvaala.path", process.execPath);
  __test.setConfig("openvaala.args", scriptedArgs());
  const ctx = fakeContext(version);
  const api = activate(ctx);
  try {
    await fn(api, ctx);
  } finally {
    await api.dispose();
  }
}

beforeEach(() => __test.reset());

test("New Chat: a new session in the current folder, the input focused; without a folder, a warning", async () => {
  await withExtension([], async () => {
    await run(COMMANDS.newChat);
    assert.deepEqual(messages("warning"), ["Open a folder to chat with OpenVaala."], "New Chat without a folder asks for one");
    assert.ok(__test.state.executed.some((e) => e.command === "openvaala.chat.focus"), "New Chat reveals the chat");
  });
  __test.reset();
  const dir = tmp();
  await withExtension(
    [folder(dir)],
    async (api) => {
      await run(COMMANDS.newChat);
      const a = api.agentFor(folder(dir));
      assert.equal(a.running, true, "New Chat starts the folder's server");
      assert.deepEqual(await receivedOf(a.connection!, "session/new"), [{ cwd: dir, mcpServers: [] }], "New Chat opens a session in the folder");
      assert.equal((await receivedOf(a.connection!, "initialize"))[0].clientInfo.version, "7.7.7", "the server is told the extension's version");
    },
    "7.7.7",
  );
  __test.reset();
  await withExtension([folder(dir)], async (api) => {
    __test.setConfig("openvaala.path", path.join(dir, "missing"));
    await run(COMMANDS.newChat);
    assert.equal(messages("error").length, 1, "a failing New Chat shows an error");
    assert.match(messages("error")[0]!, /^OpenVaala: Could not find the openvaala binary/, "the error says what failed");
    assert.equal(api.agentFor(folder(dir)).running, false);
  });
});

test("Stop cancels the turn; Restart Server restarts it; Show Server Log shows it", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api) => {
    await run(COMMANDS.stop); // nothing running: nothing happens
    await run(COMMANDS.restart);
    const a = api.agentFor(folder(dir));
    assert.equal(a.running, true, "Restart Server starts the server");
    await a.prompt("hi");
    const sessionId = a.state.sessionId;
    const pid = a.connection!.pid;
    await run(COMMANDS.stop);
    assert.deepEqual(await receivedOf(a.connection!, "session/cancel"), [{ sessionId }], "Stop sends session/cancel");
    await run(COMMANDS.restart);
    assert.notEqual(a.connection!.pid, pid, "Restart Server starts a new process");
    assert.deepEqual(a.state.items, [], "and clears the chat");
    await run(COMMANDS.showLog);
    assert.deepEqual(__test.state.shownOutputs, ["OpenVaala Server"], "Show Server Log shows the OpenVaala Server output");
  });
});

test("Open Config Folder: creates and reveals the config root; opens config.yaml when there is one", async () => {
  const root = path.join(tmp(), "cfg");
  const saved = process.env.OPENVAALA_CONFIG_DIR;
  process.env.OPENVAALA_CONFIG_DIR = root;
  try {
    await withExtension([], async () => {
      await run(COMMANDS.openConfigFolder);
      assert.ok(fs.statSync(root).isDirectory(), "the config root is created");
      const reveal = __test.state.executed.find((e) => e.command === "revealFileInOS")!;
      assert.equal(reveal.args[0].fsPath, path.join(root, "config.yaml"), "the config root is revealed at config.yaml");
      assert.deepEqual(__test.state.shownDocuments, [], "no config.yaml: nothing opened");
      fs.writeFileSync(path.join(root, "config.yaml"), "x: 1\n");
      await run(COMMANDS.openConfigFolder);
      assert.equal((__test.state.shownDocuments as { doc: vscode.Uri }[])[0]?.doc.fsPath, path.join(root, "config.yaml"), "an existing config.yaml is opened");
    });
  } finally {
    if (saved === undefined) delete process.env.OPENVAALA_CONFIG_DIR;
    else process.env.OPENVAALA_CONFIG_DIR = saved;
  }
});

test("Open Config Folder and Check Configuration use the config root that openvaala.env gives the server", async () => {
  const dir = tmp();
  const root = path.join(tmp(), "from-setting");
  const bin = path.join(dir, "env-openvaala");
  fs.writeFileSync(bin, `#!/bin/sh\necho "$OPENVAALA_CONFIG_DIR" > '${path.join(dir, "env-seen")}'\necho '{"ok":true,"errors":[]}'\n`);
  fs.chmodSync(bin, 0o755);
  await withExtension([folder(dir)], async () => {
    __test.setConfig("openvaala.env", { OPENVAALA_CONFIG_DIR: root });
    __test.setConfig("openvaala.path", bin);
    await run(COMMANDS.configCheck);
    assert.equal(fs.readFileSync(path.join(dir, "env-seen"), "utf8").trim(), root, "the check runs with openvaala.env, like the chat's server");
    await run(COMMANDS.openConfigFolder);
    assert.ok(fs.statSync(root).isDirectory(), "the config root named in openvaala.env is created");
    assert.equal(__test.state.executed.find((e) => e.command === "revealFileInOS")?.args[0].fsPath, path.join(root, "config.yaml"), "and revealed");
  });
});

test("Open Config Folder in a browser or remote window: no revealFileInOS failure, config.yaml is opened (new when missing)", async () => {
  const root = path.join(tmp(), "cfg");
  await withExtension([], async () => {
    __test.setConfig("openvaala.env", { OPENVAALA_CONFIG_DIR: root });
    __test.state.missingCommands.add("revealFileInOS");
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, "config.yaml"), "x: 1\n");
    await run(COMMANDS.openConfigFolder);
    assert.equal((__test.state.shownDocuments as { doc: vscode.Uri }[])[0]?.doc.fsPath, path.join(root, "config.yaml"), "a window without revealFileInOS still opens config.yaml");
    fs.rmSync(path.join(root, "config.yaml"));
    __test.state.shownDocuments.length = 0;
    (vscode.env as { remoteName?: string }).remoteName = "ssh-remote";
    await run(COMMANDS.openConfigFolder);
    const shown = (__test.state.shownDocuments as { doc: vscode.Uri }[])[0]?.doc;
    assert.equal(shown?.scheme, "untitled", "a remote window opens a new config.yaml to save");
    assert.equal(shown?.fsPath, path.join(root, "config.yaml"), "at the config root");
  });
});

test("in a remote window a missing binary says the settings are read from the Remote settings", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async () => {
    (vscode.env as { remoteName?: string }).remoteName = "ssh-remote";
    __test.setConfig("openvaala.path", path.join(dir, "missing"));
    await run(COMMANDS.configCheck);
    assert.match(messages("error")[0] ?? "", /Could not find the openvaala binary.*Remote settings/, "the error points at the Remote settings");
  });
});

test("the config root follows the server's rules", () => {
  assert.equal(configRoot({ OPENVAALA_CONFIG_DIR: "/c", XDG_CONFIG_HOME: "/x" }), "/c", "OPENVAALA_CONFIG_DIR wins");
  assert.equal(configRoot({ XDG_CONFIG_HOME: "/x" }), path.join("/x", "openvaala"), "then $XDG_CONFIG_HOME/openvaala");
  assert.equal(configRoot({}), path.join(os.homedir(), ".config", "openvaala"), "else ~/.config/openvaala");
});

function fakeChecker(dir: string, stdout: string, code: number): string {
  const bin = path.join(dir, "fake-openvaala");
  fs.writeFileSync(bin, `#!/bin/sh\necho "$PWD $*" > '${path.join(dir, "ran")}'\ncat <<'EOF'\n${stdout}\nEOF\nexit ${code}\n`);
  fs.chmodSync(bin, 0o755);
  return bin;
}

test("Check Configuration: problems in the Problems panel and a summary; a clean or failed check says so", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async () => {
    const cfg = path.join(dir, "config.yaml");
    __test.setConfig("openvaala.path", fakeChecker(dir, JSON.stringify({ ok: false, errors: [{ path: cfg, line: 2, message: "bad key" }, { path: "rel.yaml", line: 1, message: "worse" }] }), 1));
    __test.state.messageAnswers.push("Show Problems");
    await run(COMMANDS.configCheck);
    assert.equal(fs.readFileSync(path.join(dir, "ran"), "utf8").trim(), `${dir} config check --json --cwd ${dir}`, "the check runs in the current folder");
    assert.deepEqual(messages("warning"), ["OpenVaala config check: 2 problem(s)."], "the user is told how many problems");
    assert.deepEqual(__test.state.messages[0]!.items, ["Show Problems"], "with a button to the Problems panel");
    await waitUntil(() => __test.state.executed.some((e) => e.command === "workbench.actions.view.problems"), 2000, "the Problems panel to open");
    const diags = __test.state.diagnostics.get("openvaala")!;
    assert.equal(diags.get(cfg)![0]!.message, "bad key", "problems land in the Problems panel by file");
    assert.equal(diags.get(path.join(dir, "rel.yaml"))![0]!.message, "worse", "relative paths are relative to the folder");
    assert.match((__test.state.outputs.get("OpenVaala Server") ?? []).join(""), new RegExp(`config check in ${dir}: exit 1`), "the server log records the check");

    __test.state.messages.length = 0;
    __test.state.messageAnswers.push(undefined);
    const n = __test.state.executed.length;
    await run(COMMANDS.configCheck);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(__test.state.executed.slice(n).some((e) => e.command === "workbench.actions.view.problems"), false, "dismissing the summary opens nothing");

    __test.state.messages.length = 0;
    __test.setConfig("openvaala.path", fakeChecker(dir, JSON.stringify({ ok: true, errors: [] }), 0));
    await run(COMMANDS.configCheck);
    assert.deepEqual(messages("info"), ["OpenVaala config check: no problems."], "a clean check says so");
    assert.equal(diags.size, 0, "and clears the Problems panel");

    __test.state.messages.length = 0;
    __test.setConfig("openvaala.path", fakeChecker(dir, "crashed", 3));
    await run(COMMANDS.configCheck);
    assert.deepEqual(messages("error"), ["OpenVaala config check failed (exit 3); see the server log."], "a failed check says so");

    __test.state.messages.length = 0;
    __test.setConfig("openvaala.path", path.join(dir, "missing"));
    await run(COMMANDS.configCheck);
    assert.match(messages("error")[0] ?? "", /Could not find the openvaala binary/, "a missing binary is reported");
  });
  __test.reset();
  const home = tmp();
  await withExtension([], async () => {
    __test.setConfig("openvaala.path", fakeChecker(home, "{}", 0));
    await run(COMMANDS.configCheck);
    assert.equal(fs.readFileSync(path.join(home, "ran"), "utf8").trim().split(" ").pop(), os.homedir(), "without a folder the check runs for the home folder");
  });
});

test("removing a folder stops its server; deactivate stops them all", async () => {
  const one = tmp();
  const two = tmp();
  await withExtension([folder(one), folder(two)], async (api) => {
    const a = api.agentFor(folder(one));
    const b = api.agentFor(folder(two));
    assert.equal(api.agentFor(folder(one)), a, "one agent per folder");
    await a.prompt("hi");
    await b.prompt("hi");
    const childA = a.connection!.child!;
    const childB = b.connection!.child!;
    (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = [folder(two)];
    __test.state.folderEvents.fire({ added: [], removed: [folder(one)] });
    await waitUntil(() => childA.exitCode !== null || childA.signalCode !== null, 5000, "the removed folder's server to stop");
    assert.equal(api.agents.has(folder(one).uri.toString()), false, "the removed folder's agent is gone");
    assert.equal(b.running, true, "other folders keep their server");
    await deactivate();
    await waitUntil(() => childB.exitCode !== null || childB.signalCode !== null, 5000, "deactivate to stop every server");
    assert.equal(api.agents.size, 0, "no agents after deactivate");
  });
});

test("activation disposes what it registered", async () => {
  await withExtension([], async (_api, ctx) => {
    assert.ok(__test.state.commands.size > 0);
    for (const d of ctx.subscriptions) d.dispose();
    assert.equal(__test.state.commands.size, 0, "commands are unregistered on dispose");
    assert.equal(__test.state.webviewProviders.size, 0, "the chat view is unregistered on dispose");
  });
});

test("New Chat in Editor Tab: a chat in a webview panel with its own session; History opens a session into a tab; closing the tab ends its chat", async () => {
  await withExtension([], async () => {
    await run(COMMANDS.newChatInTab);
    assert.deepEqual(messages("warning"), ["Open a folder to chat with OpenVaala."], "without a folder it asks for one");
    assert.equal(__test.state.panels.length, 0, "and opens no tab");
  });
  __test.reset();
  const dir = tmp();
  await withExtension([folder(dir)], async (api) => {
    await run(COMMANDS.newChatInTab);
    const [panel] = __test.state.panels;
    assert.ok(panel, "a webview panel opens in the editor area");
    assert.equal(panel.viewType, "openvaala.chatTab");
    assert.equal(panel.title, "OpenVaala Chat");
    assert.match(panel.webview.html, /dist\/webview\.js/, "with the chat webview");
    const [p] = [...api.panels];
    const a = api.agentFor(folder(dir));
    panel.send({ type: "send", text: "in the tab" });
    await waitUntil(() => p!.session.state.items.some((i) => i.kind === "agent"), 5000, "the tab's answer");
    await a.prompt("in the side bar");
    assert.notEqual(p!.session.state.sessionId, a.state.sessionId, "the tab has its own session");
    assert.deepEqual(a.state.items.filter((i) => i.kind === "user").map((i) => (i as { text: string }).text), ["in the side bar"], "the side bar chat is untouched by the tab");
    const states = panel.posted.filter((m: { type: string }) => m.type === "state");
    assert.equal(states[states.length - 1].model.inTab, true, "the tab's webview knows it is a tab (no folder picker)");

    const sideSession = a.state.sessionId!;
    await api.chat.onMessage({ type: "openSessionInTab", sessionId: sideSession });
    assert.equal(__test.state.panels.length, 1, "a session open in the side bar is not opened a second time");
    assert.ok(__test.state.executed.some((e) => e.command === "openvaala.chat.focus"), "the side bar is shown instead");
    await api.chat.onMessage({ type: "openSessionInTab", sessionId: p!.session.state.sessionId! });
    assert.equal(__test.state.panels.length, 1, "nor is a session open in a tab");
    assert.equal(panel.revealed, 1, "that tab is shown instead");
    await a.newChat();
    await api.chat.onMessage({ type: "openSessionInTab", sessionId: sideSession });
    await waitUntil(() => __test.state.panels.length === 2, 2000, "a second tab");
    const second = [...api.panels][1]!;
    await waitUntil(() => second.session.state.sessionId === sideSession, 5000, "the session loaded into the tab");
    assert.equal((await receivedOf(a.connection!, "session/load")).at(-1).sessionId, sideSession, "History loads a stored session into a new tab");

    const tabLoads = (await receivedOf(a.connection!, "session/load")).length;
    await api.chat.onMessage({ type: "loadSession", sessionId: sideSession });
    assert.equal(__test.state.panels[1].revealed, 1, "History in the side bar shows a session open in a tab there");
    assert.equal((await receivedOf(a.connection!, "session/load")).length, tabLoads, "instead of loading it a second time");
    assert.notEqual(a.state.sessionId, sideSession, "the side bar keeps its own session");

    panel.dispose();
    assert.equal(api.panels.size, 1, "a closed tab is forgotten");
  });
});

test("after a window reload VS Code hands back each chat tab: it is a chat again, with its session and queue", async () => {
  const dir = tmp();
  const other = tmp();
  await withExtension([folder(dir), folder(other)], async (api) => {
    const serializer = __test.state.panelSerializers.get("openvaala.chatTab");
    assert.ok(serializer, "chat tabs can be restored (a webview panel serializer for openvaala.chatTab)");
    const panel = vscode.window.createWebviewPanel("openvaala.chatTab", "OpenVaala Chat", vscode.ViewColumn.Active, {}) as unknown as { webview: { html: string }; posted: { type: string; state?: unknown }[] };
    await serializer.deserializeWebviewPanel(panel, { folder: folder(other).uri.toString(), sessionId: "s-tab", queue: [{ text: "queued in the tab", attachments: [] }] });
    const [p] = [...api.panels];
    assert.ok(p, "the restored tab is a chat");
    assert.match(panel.webview.html, /dist\/webview\.js/, "showing the chat webview");
    assert.equal(p!.currentAgent().folder.uri.fsPath, other, "on the folder it was saved with");
    await waitUntil(() => p!.session.state.sessionId === "s-tab", 5000, "the tab's session reopened");
    assert.deepEqual((await receivedOf(p!.currentAgent().connection!, "session/load")).map((x: { sessionId: string }) => x.sessionId), ["s-tab"], "with session/load");
    assert.deepEqual(p!.session.queue.list.map((q) => q.text), ["queued in the tab"], "its queue is back");
    await waitUntil(() => panel.posted.some((m) => m.type === "persist" && (m.state as { sessionId?: string }).sessionId === "s-tab"), 2000, "the state saved again");

    const plain = vscode.window.createWebviewPanel("openvaala.chatTab", "OpenVaala Chat", vscode.ViewColumn.Active, {});
    await serializer.deserializeWebviewPanel(plain, undefined);
    assert.equal(api.panels.size, 2, "a tab without saved state is an empty chat on the current folder");
    assert.equal([...api.panels][1]!.currentAgent().folder.uri.fsPath, dir);
  });
  __test.reset();
  await withExtension([], async (api) => {
    const panel = vscode.window.createWebviewPanel("openvaala.chatTab", "OpenVaala Chat", vscode.ViewColumn.Active, {}) as unknown as { disposed: boolean };
    await __test.state.panelSerializers.get("openvaala.chatTab").deserializeWebviewPanel(panel, { sessionId: "s" });
    assert.equal(panel.disposed, true, "without a folder a restored tab is closed");
    assert.equal(api.panels.size, 0);
  });
});

test("Show ACP Traffic shows the traffic log, and says how to turn the recording on when it is off", async () => {
  await withExtension([], async () => {
    await run(COMMANDS.showTraffic);
    assert.deepEqual(__test.state.outputShows, [{ name: "OpenVaala ACP Traffic", preserveFocus: true }], "the traffic output is shown, the focus left alone");
    assert.deepEqual(messages("info"), ['Turn on "openvaala.traceTraffic" and restart the server (OpenVaala: Restart Server) to record the ACP traffic.'], "with a hint while recording is off");
    __test.state.messages.length = 0;
    __test.setConfig("openvaala.traceTraffic", true);
    await run(COMMANDS.showTraffic);
    assert.deepEqual(messages("info"), [], "no hint when it records");
    await run(COMMANDS.showLog);
    assert.deepEqual(__test.state.outputShows.at(-1), { name: "OpenVaala Server", preserveFocus: true }, "Show Server Log leaves the focus too");
  });
});

test("without a folder Stop and Restart Server do nothing", async () => {
  await withExtension([], async (api) => {
    await run(COMMANDS.stop);
    await run(COMMANDS.restart);
    assert.equal(api.agents.size, 0, "no server is started");
  });
});

test("the server is told the extension's version, 0.1.0 when VS Code does not give one", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api) => {
    await run(COMMANDS.newChat);
    const a = api.agentFor(folder(dir));
    assert.equal((await receivedOf(a.connection!, "initialize"))[0].clientInfo.version, "0.1.0");
  });
});

test("in a remote window Open Config Folder does not reveal the folder in the (local) OS", async () => {
  const root = path.join(tmp(), "cfg");
  await withExtension([], async () => {
    __test.setConfig("openvaala.env", { OPENVAALA_CONFIG_DIR: root });
    (vscode.env as { remoteName?: string }).remoteName = "ssh-remote";
    await run(COMMANDS.openConfigFolder);
    assert.equal(__test.state.executed.some((e) => e.command === "revealFileInOS"), false, "no revealFileInOS in a remote window");
  });
});

test("the chat view and tabs keep their content when hidden; tabs carry the OpenVaala icon", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async () => {
    assert.deepEqual(__test.state.webviewProviderOptions.get("openvaala.chat"), { webviewOptions: { retainContextWhenHidden: true } }, "the side bar view is not reloaded when hidden");
    await run(COMMANDS.newChatInTab);
    const [panel] = __test.state.panels;
    assert.deepEqual(panel.options, { retainContextWhenHidden: true }, "nor is a tab");
    assert.equal((panel.iconPath as vscode.Uri).fsPath, path.join(EXT_ROOT, "media", "icon.svg"), "the tab shows the OpenVaala icon");
  });
});

test("New Chat in Editor Tab with a session id opens that session; other arguments (a menu's) open a new chat; a session that fails to load says so in the tab", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api) => {
    const a = api.agentFor(folder(dir));
    await run(COMMANDS.newChatInTab, { fsPath: "/from/a/menu" });
    await run(COMMANDS.newChatInTab, "s-stored");
    const [plain, stored] = [...api.panels];
    await waitUntil(() => stored!.session.state.sessionId === "s-stored", 5000, "the stored session in the tab");
    assert.deepEqual((await receivedOf(a.connection!, "session/load")).map((l: { sessionId: string }) => l.sessionId), ["s-stored"], "only the session id is loaded");
    assert.equal(plain!.session.state.sessionId, undefined, "a non-string argument opens an empty chat");
    assert.deepEqual(__test.state.panels[1].posted.filter((m: { type: string }) => m.type === "focusInput").length, 1, "the new tab's input is focused");

    await a.stop();
    __test.setConfig("openvaala.path", path.join(dir, "missing"));
    await run(COMMANDS.newChatInTab, "s-other");
    const failed = [...api.panels][2]!;
    await waitUntil(() => failed.session.state.items.some((i) => i.kind === "notice"), 5000, "a notice in the tab");
    const notice = failed.session.state.items.find((i) => i.kind === "notice") as { severity: string; text: string };
    assert.equal(notice.severity, "error");
    assert.match(notice.text, /^Could not open the session: /, "the tab says the session could not be opened");
  });
});

test("a permission prompt shows the chat that asks: its tab, or the side bar", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api) => {
    await run(COMMANDS.newChatInTab);
    const [panel] = __test.state.panels;
    const [p] = [...api.panels];
    const ask = (sessionId: string) => script({ request: "session/request_permission", params: { sessionId, toolCall: { toolCallId: "t" }, options: [{ optionId: "ok", name: "OK", kind: "allow_once" }] } });
    await p!.session.newChat();
    panel.send({ type: "send", text: ask(p!.session.state.sessionId!) });
    await waitUntil(() => Object.keys(p!.session.state.permissions).length, 5000, "the tab's permission prompt");
    assert.equal(panel.revealed, 1, "the tab that asks is shown");
    const focused = () => __test.state.executed.filter((e) => e.command === "openvaala.chat.focus").length;
    assert.equal(focused(), 0, "not the side bar");
    const a = api.agentFor(folder(dir));
    await a.newChat();
    void a.prompt(ask(a.state.sessionId!));
    await waitUntil(() => Object.keys(a.main.state.permissions).length, 5000, "the side bar's permission prompt");
    assert.equal(focused(), 1, "the side bar is shown for its own chat");
    assert.equal(panel.revealed, 1);
    await a.cancel();
    await p!.session.cancel();
  });
});

test("an edit the agent completes opens its diff beside and is highlighted in the file; the next turn clears the highlight", async () => {
  const dir = tmp();
  const file = path.join(dir, "a.txt");
  fs.writeFileSync(file, "one\nTWO\nthree\n");
  await withExtension([folder(dir)], async (api) => {
    const a = api.agentFor(folder(dir));
    const edit = (p: string, id = `t-${path.basename(p)}`) => script({ update: { sessionUpdate: "tool_call", toolCallId: id, title: "Edit", kind: "edit", status: "completed", content: [{ type: "diff", path: p, oldText: "one\ntwo\nthree\n", newText: "one\nTWO\nthree\n" }] } });
    await a.prompt(edit(file));
    const diff = await waitUntil(() => __test.state.executed.find((e) => e.command === "vscode.diff"), 2000, "the edit's diff");
    assert.equal(diff.args[2], "a.txt: edited by OpenVaala", "the diff of the edit opens");
    assert.deepEqual(diff.args[3], { preview: true, preserveFocus: true }, "beside the chat, keeping the focus there");
    await waitUntil(() => api.highlights.ranges(file).length, 2000, "the highlight");
    assert.deepEqual(api.highlights.ranges(file).map((r) => [r.start.line, r.end.line]), [[1, 1]], "the changed line is highlighted");
    const gone = path.join(dir, "gone.txt");
    await a.prompt(edit(gone));
    await waitUntil(() => __test.state.executed.filter((e) => e.command === "vscode.diff").length === 2, 2000, "the second diff");
    assert.deepEqual(api.highlights.ranges(file), [], "a new turn clears the old highlights");
    assert.deepEqual(api.highlights.ranges(gone), [], "a file that cannot be read gets none");
    assert.doesNotMatch((__test.state.outputs.get("OpenVaala Server") ?? []).join(""), /showing the edit of/, "and that is no error");
    __test.state.missingCommands.add("vscode.diff");
    await a.prompt(edit(file, "t-again"));
    await waitUntil(() => /showing the edit of/.test((__test.state.outputs.get("OpenVaala Server") ?? []).join("")), 2000, "the failure in the log");
    assert.match((__test.state.outputs.get("OpenVaala Server") ?? []).join(""), new RegExp(`\\[openvaala-vscode\\] showing the edit of ${file}: command 'vscode.diff' not found`), "a diff that cannot be opened is logged, not thrown");
  });
});

test("when VS Code disposes the extension's subscriptions the servers stop; after deactivate that is harmless", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api, ctx) => {
    const a = api.agentFor(folder(dir));
    await a.prompt("hi");
    const child = a.connection!.child!;
    for (const d of ctx.subscriptions) d.dispose();
    await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 5000, "the server to stop");
    await deactivate();
    for (const d of ctx.subscriptions) d.dispose();
  });
});

test("a window reload as VS Code does it (deactivate, then the subscriptions disposed) writes nothing to a closed output channel", async () => {
  const dir = tmp();
  await withExtension([folder(dir)], async (api, ctx) => {
    const a = api.agentFor(folder(dir));
    await a.prompt("hi");
    const child = a.connection!.child!;
    // VS Code calls deactivate() and, without waiting for it, disposes the subscriptions
    const deactivated = deactivate();
    for (const d of ctx.subscriptions) d.dispose();
    await deactivated;
    await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 5000, "the server to stop");
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(__test.state.closedChannelUses, [], 'no "Channel has been closed": the server\'s exit is not logged to a disposed channel');
  });
});
