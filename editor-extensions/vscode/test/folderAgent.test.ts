// FolderAgent (one server per workspace folder) against the `vscode` stub and the scripted stand-in
// agent: what the server is sent, what the chat shows, and what happens when the server dies.
import { test as nodeTest, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import { MemorySecrets } from "./memorySecrets.js";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { FolderAgent, type FolderAgentDeps } from "../src/vscode/folderAgent.js";
import { SCRIPTED_AGENT, agentLog, receivedOf, script, scriptedArgs } from "./scripted.js";
import { waitUntil, sleep } from "./util.js";

// these tests wait on processes: a hang fails the test in 15 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 15_000 }, fn);

function tmp(prefix = "ovfa-") {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function folder(p: string, name = path.basename(p)) {
  return { uri: vscode.Uri.file(p), name, index: 0 } as vscode.WorkspaceFolder;
}

const agents: FolderAgent[] = [];
let reveals = 0;

function logText(): string {
  return (__test.state.outputs.get("test log") ?? []).join("");
}

function makeAgent(dir: string, over: Partial<FolderAgentDeps> & { args?: string[] } = {}): FolderAgent {
  const gs = path.join(tmp("ovgs-"), "User", "globalStorage", "openvaala.openvaala");
  __test.setConfig("openvaala.args", over.args ?? scriptedArgs());
  const a = new FolderAgent(folder(dir), {
    extensionPath: dir,
    globalStoragePath: gs,
    secrets: new MemorySecrets() as unknown as vscode.SecretStorage,
    log: vscode.window.createOutputChannel("test log"),
    mcpProvider: new acp.McpOverAcpProvider(),
    binary: process.execPath,
    reveal: () => reveals++,
    clientVersion: "1.2.3",
    ...over,
  });
  agents.push(a);
  return a;
}

const items = (a: FolderAgent) => a.state.items.map((i) => ({ kind: i.kind, text: (i as { text?: string }).text }));
const notices = (a: FolderAgent) => a.state.items.filter((i) => i.kind === "notice").map((i) => (i as { text: string }).text);

beforeEach(() => {
  __test.reset();
  reveals = 0;
});
afterEach(async () => {
  for (const a of agents.splice(0)) {
    await a.stop();
    a.dispose();
  }
});

test("the first prompt starts the server in the folder, opens a session there and shows the turn", async () => {
  const dir = tmp();
  __test.setConfig("openvaala.path", process.execPath);
  const a = makeAgent(dir, { binary: undefined });
  let changes = 0;
  a.onDidChange(() => changes++);
  assert.equal(a.running, false, "the server starts on demand only");
  const r = await a.prompt("hello");
  assert.equal(r?.stopReason, "end_turn", "the prompt's stop reason comes back");
  assert.equal(a.running, true, "the server runs after the first prompt");
  assert.deepEqual(items(a), [{ kind: "user", text: "hello" }, { kind: "agent", text: "echo: hello" }], "the chat shows the user's message and the answer");
  assert.equal(a.state.busy, false, "the turn is over");
  const [init] = await receivedOf(a.connection!, "initialize");
  assert.deepEqual(init.clientInfo, { name: "openvaala-vscode", title: "OpenVaala for VS Code", version: "1.2.3" }, "the server is told the extension's name and version");
  const news = await receivedOf(a.connection!, "session/new");
  assert.deepEqual(news, [{ cwd: dir, mcpServers: [] }], "one session in the folder");
  assert.deepEqual((await receivedOf(a.connection!, "session/prompt"))[0].prompt, [{ type: "text", text: "hello" }], "the user's text is sent as typed");
  assert.match(logText(), new RegExp(`starting ${process.execPath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} .*scripted-agent\\.mjs in ${dir}`), "the server log says what was started where");
  const pid = a.connection!.pid;
  await a.prompt("again");
  assert.equal(a.connection!.pid, pid, "one server process per folder");
  assert.equal((await receivedOf(a.connection!, "session/new")).length, 1, "the session is kept between prompts");
  assert.equal((await receivedOf(a.connection!, "session/prompt"))[1].sessionId, (await receivedOf(a.connection!, "session/prompt"))[0].sessionId);
  await waitUntil(() => changes > 0, 2000, "a change event for the view");
});

test("the server is started with `acp` unless openvaala.args says otherwise, and with openvaala.env", async () => {
  const dir = tmp();
  const argsFile = path.join(dir, "args");
  const wrapper = path.join(dir, "fake-openvaala");
  fs.writeFileSync(wrapper, `#!/bin/sh\necho "$@" > '${argsFile}'\nexec '${process.execPath}' '${SCRIPTED_AGENT}'\n`);
  fs.chmodSync(wrapper, 0o755);
  const a = makeAgent(dir, { binary: wrapper, env: { ...process.env, OV_BASE: "base" } });
  __test.state.config.delete("openvaala.args");
  __test.setConfig("openvaala.env", { OV_EXTRA: "extra" });
  await a.prompt(script({ probe: "env:OV_BASE" }, { probe: "env:OV_EXTRA" }));
  assert.equal(fs.readFileSync(argsFile, "utf8").trim(), "acp", "without openvaala.args the server gets `acp`");
  assert.deepEqual((await agentLog(a.connection!)).results, ["base", "extra"], "the server's environment is the base one plus openvaala.env");
});

test("a permission prompt is shown, and the user's answer (or a cancel) is what the server gets", async () => {
  const a = makeAgent(tmp());
  await a.prompt("start");
  const sessionId = a.state.sessionId!;
  const perm = { sessionId, toolCall: { toolCallId: "t1", title: "Write a.txt", kind: "edit" }, options: [{ optionId: "yes", name: "Allow", kind: "allow_once" }, { optionId: "no", name: "Reject", kind: "reject_once" }] };
  const turn = a.prompt(script({ request: "session/request_permission", params: perm }, { request: "session/request_permission", params: perm }));
  await waitUntil(() => a.state.permissions.perm1, 5000, "the first permission prompt");
  assert.equal(a.state.permissions.perm1!.outcome, undefined, "the prompt waits for the user");
  assert.ok(a.state.items.some((i) => i.kind === "permission"), "the chat shows the permission prompt");
  assert.equal(reveals, 1, "the chat view is revealed for a permission prompt");
  a.answerPermission("perm1", "no");
  await waitUntil(() => a.state.permissions.perm2, 5000, "the second permission prompt");
  assert.equal(a.state.permissions.perm1!.outcome, "no", "the chat shows the user's answer");
  a.answerPermission("perm-unknown", "yes"); // an answer to nothing is ignored
  await a.cancel();
  const r = await turn;
  assert.equal(a.state.permissions.perm2!.outcome, "cancelled", "a cancelled prompt shows as cancelled");
  assert.equal(r?.stopReason, "end_turn");
  const { results } = await agentLog(a.connection!);
  assert.deepEqual(results[0], { outcome: { outcome: "selected", optionId: "no" } }, "the server gets the option the user picked");
  assert.deepEqual(results[1], { outcome: { outcome: "cancelled" } }, "Stop answers a pending permission prompt with cancelled, not a rejection");
  assert.deepEqual(await receivedOf(a.connection!, "session/cancel"), [{ sessionId }], "Stop sends session/cancel for the session");
});

test("Stop with no session sends nothing; updates of other sessions are not shown", async () => {
  const a = makeAgent(tmp());
  await a.cancel();
  await a.setMode("x");
  await a.setConfigOption("x", "y");
  assert.equal(a.running, false, "Stop, mode and option changes do not start a server");
  await a.prompt(script({ updateFor: "someone-else", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ghost" } } }, { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "mine" } } }));
  assert.equal(a.state.items.filter((i) => i.kind === "agent").map((i) => (i as { text: string }).text).join(""), "mine", "only this session's updates reach the chat");
});

test("a server that dies during a turn: the turn ends with an error, the server restarts and reloads the session", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ caps: { loadSession: true } }) });
  await a.prompt("first");
  const sessionId = a.state.sessionId;
  const pid = a.connection!.pid;
  const r = await a.prompt(script({ exit: 9 }));
  assert.equal(r, undefined, "a failed prompt resolves to nothing");
  assert.equal(a.state.busy, false, "the turn is over");
  const errors = a.state.items.filter((i) => i.kind === "notice" && i.severity === "error");
  assert.equal(errors.length, 1, `the turn ends with one error in the chat: ${JSON.stringify(notices(a))}`);
  assert.equal((errors[0] as { text: string }).text, "The OpenVaala server stopped during the turn.", "the error says the server stopped, not an RPC detail");
  await waitUntil(() => notices(a).includes("The OpenVaala server exited (code 9); restarting."), 5000, "the chat to say the server is restarting");
  assert.ok(__test.state.messages.some((m) => m.level === "warning" && m.text.includes("exited (code 9); restarting it.")), "a warning pops up");
  assert.match(logText(), /server exited \(code 9, signal null\) unexpectedly/, "the server log records the crash");
  await waitUntil(() => a.running && a.connection!.pid !== pid && a.connection!.initializeResponse, 10000, "restart");
  await waitUntil(() => a.state.sessionId === sessionId, 5000, "the session to be reloaded");
  assert.deepEqual(await receivedOf(a.connection!, "session/load"), [{ sessionId, cwd: a.folder.uri.fsPath, mcpServers: [] }], "the new server is asked to load the old session");
  assert.ok(notices(a).length >= 2, "the chat is kept across the restart");
  await a.prompt("after");
  assert.equal((await receivedOf(a.connection!, "session/prompt"))[0].sessionId, sessionId, "the chat goes on in the reloaded session");
});

test("after a crash, a server without session/load starts a new session", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ caps: {} }) });
  await a.prompt("first");
  const pid = a.connection!.pid;
  await a.prompt(script({ exit: 3 }));
  await waitUntil(() => a.running && a.connection!.pid !== pid && a.connection!.initializeResponse, 10000, "restart");
  await sleep(100);
  assert.deepEqual(await receivedOf(a.connection!, "session/load"), [], "no session/load without the capability");
  await a.prompt("next");
  assert.equal((await receivedOf(a.connection!, "session/new")).length, 1, "the next prompt opens a new session");
});

test("after a crash the chat's revision counter goes on (the webview redraws by revision), it never starts over", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ caps: {} }) });
  await a.prompt("first");
  a.state = { ...a.state, rev: 5000 }; // a long chat
  const pid = a.connection!.pid;
  await a.prompt(script({ exit: 3 }));
  const before = a.state.rev;
  await waitUntil(() => a.running && a.connection!.pid !== pid && a.connection!.initializeResponse, 10000, "restart");
  await a.prompt("next");
  assert.ok(a.state.items.length > 0 && a.state.items.every((i) => i.rev > before), `every item of the new chat has a newer revision than the old chat (${before}): ${JSON.stringify(a.state.items.map((i) => i.rev))}`);
  const last = a.state.rev;
  await a.restart();
  assert.ok(a.state.rev > last, "Restart Server does not start the counter over either");
});

test("nothing is sent to a starting server before it has answered initialize", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ initDelayMs: 400 }) });
  const starting = a.ensureStarted();
  await waitUntil(() => a.connection, 5000, "the server process");
  await a.newChat();
  await starting;
  const log = await agentLog(a.connection!);
  const early = log.received.filter((r) => (r as { beforeInitialized?: boolean }).beforeInitialized).map((r) => r.method);
  assert.deepEqual(early, [], "session/new waited for the initialize answer");
});

test("a server that keeps crashing is not restarted forever", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ exitOnInit: 5 }) });
  await assert.rejects(a.prompt("x"), "a server that dies while starting fails the prompt");
  await waitUntil(() => notices(a).some((t) => /keeps crashing; not restarting/.test(t)), 20000, "the crash-loop notice");
  const restarts = notices(a).filter((t) => /restarting\.$/.test(t)).length;
  assert.equal(restarts, 3, `three restarts, then it gives up: ${JSON.stringify(notices(a))}`);
  assert.ok(__test.state.messages.some((m) => m.level === "error" && /keeps crashing/.test(m.text)), "an error pops up");
  await sleep(300);
  assert.equal(a.running, false, "no further restart");
});

test("stop, restart and dispose: the server goes away; a closed folder starts nothing", async () => {
  const a = makeAgent(tmp());
  await a.prompt("hello");
  const child = a.connection!.child!;
  await a.restart();
  assert.ok(child.exitCode !== null || child.signalCode !== null, "restart stops the old server");
  assert.equal(a.running, true, "restart starts a new one");
  assert.deepEqual(a.state.items, [], "restart clears the chat");
  assert.equal(a.state.sessionId, undefined);
  const child2 = a.connection!.child!;
  await a.stop();
  assert.ok(child2.exitCode !== null || child2.signalCode !== null, "stop ends the server");
  assert.equal(a.running, false);
  assert.doesNotMatch(logText(), /unexpectedly/, "a stop is not a crash");
  assert.ok(!notices(a).some((t) => /restarting/.test(t)), "a stopped server is not restarted");
  a.dispose();
  await assert.rejects(a.ensureStarted(), /folder closed/, "a disposed folder agent does not start a server");
});

test("modes and config options: sent for the current session, the chat follows the answer", async () => {
  const modes = { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }, { id: "auto", name: "Full auto" }] };
  const configOptions = [{ id: "model", name: "Model", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] }];
  const a = makeAgent(tmp(), { args: scriptedArgs({ session: { modes, configOptions } }) });
  await a.newChat();
  assert.equal(a.state.modes?.currentModeId, "ask", "the session's modes are shown");
  assert.deepEqual(a.state.configOptions.map((o) => o.id), ["model"], "the session's options are shown");
  await a.setMode("auto");
  assert.deepEqual(await receivedOf(a.connection!, "session/set_mode"), [{ sessionId: a.state.sessionId, modeId: "auto" }], "the mode change is sent");
  assert.equal(a.state.modes?.currentModeId, "auto", "the chat shows the new mode");
  await a.setConfigOption("model", "b");
  assert.deepEqual(await receivedOf(a.connection!, "session/set_config_option"), [{ sessionId: a.state.sessionId, configId: "model", value: "b" }], "the option change is sent");
  assert.equal(a.state.configOptions[0]!.currentValue, "b", "the chat shows the options the server answered");
});

test("newChat: a new session, the old chat cleared", async () => {
  const a = makeAgent(tmp());
  await a.prompt("hello");
  const first = a.state.sessionId;
  await a.newChat();
  assert.notEqual(a.state.sessionId, first, "a new session");
  assert.deepEqual(a.state.items, [], "the old chat is cleared");
  assert.equal((await receivedOf(a.connection!, "session/new")).length, 2);
});

test("session history: listed for the folder when the server supports it; a loaded session replays into a fresh chat", async () => {
  const dir = tmp();
  const sessions = [{ sessionId: "old-1", cwd: dir, title: "Fix the parser", updatedAt: "2026-01-01T00:00:00Z" }];
  const replay = [
    { sessionUpdate: "user_message_chunk", content: { type: "text", text: "old question" } },
    { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old answer" } },
  ];
  const a = makeAgent(dir, { args: scriptedArgs({ sessions, replay }) });
  await a.prompt("current");
  const listed = await a.listSessions();
  assert.deepEqual(listed.map((s) => s.sessionId), ["old-1"], "the server's sessions are listed");
  assert.equal(a.sessions, listed, "and kept for the view");
  assert.deepEqual(await receivedOf(a.connection!, "session/list"), [{ cwd: dir }], "the list is asked for this folder");
  await a.loadSession("old-1");
  assert.equal(a.state.sessionId, "old-1", "the loaded session is the current one");
  assert.deepEqual(items(a), [{ kind: "user", text: "old question" }, { kind: "agent", text: "old answer" }], "the chat shows the replayed history only");
  assert.equal(a.state.title, "Fix the parser", "the chat shows the session's title");
  assert.deepEqual(await receivedOf(a.connection!, "session/load"), [{ sessionId: "old-1", cwd: dir, mcpServers: [] }], "session/load is sent for this folder");

  const b = makeAgent(tmp(), { args: scriptedArgs({ caps: {}, sessions }) });
  assert.deepEqual(await b.listSessions(), [], "no history when the server cannot list sessions");
  assert.deepEqual(await receivedOf(b.connection!, "session/list"), [], "and nothing is asked");
});

test("terminals the server runs are mirrored into VS Code terminals and the chat", async () => {
  const a = makeAgent(tmp());
  await a.prompt("start");
  const sessionId = a.state.sessionId!;
  await a.prompt(script({ request: "terminal/create", params: { sessionId, command: "sleep 0.3; printf 'one\\ntwo\\n'; exit 2" } }));
  const { terminalId } = (await agentLog(a.connection!)).results[0];
  const t = __test.state.terminals[0];
  assert.ok(t, "a VS Code terminal is created");
  assert.equal(t.name, "OpenVaala: sleep 0.3; printf 'one\\ntwo\\n'; exit 2", "named after the command");
  const written: string[] = [];
  t.pty.onDidWrite((s: string) => written.push(s));
  await a.prompt(script({ request: "terminal/wait_for_exit", params: { sessionId, terminalId } }));
  await waitUntil(() => written.join("").includes("[exited"), 3000, "the exit line");
  assert.equal(written.join(""), "one\r\ntwo\r\n\r\n[exited with code 2]\r\n", "output is mirrored with CRLF, then the exit code");
  written.length = 0;
  t.pty.open();
  assert.equal(written.join(""), "$ sleep 0.3; printf 'one\\ntwo\\n'; exit 2\r\none\r\ntwo\r\n", "opening the terminal shows the command and the output so far");
  assert.deepEqual(a.terminalViews(), [{ id: terminalId, command: "sleep 0.3; printf 'one\\ntwo\\n'; exit 2", output: "one\ntwo\n", truncated: false, exitStatus: { exitCode: 2, signal: null } }], "the chat sees the terminal's output and exit");
  a.showTerminal(terminalId);
  assert.equal(t.shown, 1, "Show in terminal shows it");
  a.showTerminal("nope");

  await a.prompt(script({ request: "terminal/create", params: { sessionId, command: "head -c 9000 /dev/zero | tr '\\0' 'x'; echo END" } }));
  const id2 = (await agentLog(a.connection!)).results[2].terminalId;
  await a.prompt(script({ request: "terminal/wait_for_exit", params: { sessionId, terminalId: id2 } }));
  const v = a.terminalViews().find((x) => x.id === id2)!;
  assert.equal(v.output.length, 8192, "the chat shows the last 8 KiB of a long output");
  assert.ok(v.output.endsWith("END\n"), "the end of the output is kept");
  assert.equal(v.truncated, true, "a cut output is marked truncated");
  assert.equal(__test.state.terminals[1].name, "OpenVaala: head -c 9000 /dev/zero | tr '\\0' 'x'; ec", "a long command is cut to 40 characters in the terminal name");

  await a.prompt(script({ request: "terminal/create", params: { sessionId, command: "sleep 30" } }));
  const t3 = __test.state.terminals[2];
  const id3 = (await agentLog(a.connection!)).results[4].terminalId;
  const ex = new Promise<string>((r) => t3.pty.onDidWrite((s: string) => s.includes("exited") && r(s)));
  t3.pty.close();
  assert.match(await ex, /\[exited \(SIGKILL\)\]/, "closing the VS Code terminal kills the command and says so");
  void id3;
});

test("files: the server reads and writes through the editor", async () => {
  const dir = tmp();
  const file = path.join(dir, "a.txt");
  fs.writeFileSync(file, "on disk\n");
  __test.openDocument(file, "unsaved\n");
  const a = makeAgent(dir);
  await a.prompt("start");
  const sessionId = a.state.sessionId!;
  await a.prompt(script({ request: "fs/read_text_file", params: { sessionId, path: file } }, { request: "fs/write_text_file", params: { sessionId, path: path.join(dir, "b.txt"), content: "written" } }));
  const { results } = await agentLog(a.connection!);
  assert.deepEqual(results[0], { content: "unsaved\n" }, "the server reads the editor's buffer");
  assert.equal(fs.readFileSync(path.join(dir, "b.txt"), "utf8"), "written", "the server's write lands on disk");
});

test("the server log gets stderr and the requests the extension does not serve", async () => {
  const a = makeAgent(tmp(), { args: scriptedArgs({ stderr: "hello from stderr" }) });
  await a.prompt(script({ request: "x/unsupported", params: {} }));
  await waitUntil(() => logText().includes("hello from stderr"), 3000, "stderr in the log");
  assert.match(logText(), /the agent called x\/unsupported, which this extension does not implement/, "an unserved request is logged");
});

test("VS Code's MCP servers: tunnelled when the server takes `acp` servers, plain entries otherwise, none when turned off", async () => {
  const dir = tmp();
  fs.mkdirSync(path.join(dir, ".vscode"));
  fs.writeFileSync(
    path.join(dir, ".vscode", "mcp.json"),
    JSON.stringify({ servers: { local: { command: "node", args: ["s.js"], env: { K: "v" } }, web: { url: "http://127.0.0.1:1/mcp" }, old: { type: "sse", url: "http://127.0.0.1:1/sse" }, broken: { type: "stdio" } } }),
  );
  const tunnel = makeAgent(dir, { args: scriptedArgs({ caps: { mcpCapabilities: { acp: true } } }) });
  await tunnel.newChat();
  const [s1] = await receivedOf(tunnel.connection!, "session/new");
  assert.deepEqual(s1.mcpServers.map((m: { type: string; name: string }) => [m.type, m.name]).sort(), [["acp", "local"], ["acp", "old"], ["acp", "web"]], "with mcpCapabilities.acp every server is offered as an `acp` server");
  assert.ok(s1.mcpServers.every((m: { serverId?: string }) => typeof m.serverId === "string" && m.serverId.length > 0), "each tunnelled server has an id");
  assert.equal(tunnel.legacyMcpRouter !== undefined, true, "the legacy MCP form is served too");
  assert.match(logText(), /offering 3 MCP server\(s\) from VS Code: local, web, old/, "the log says which servers are offered");
  assert.match(logText(), /MCP config .*mcp\.json: server "broken": "command" is required/, "a broken entry is logged with its file");

  const plain = makeAgent(dir, { args: scriptedArgs({ caps: { mcpCapabilities: { http: true } } }) });
  await plain.newChat();
  const [s2] = await receivedOf(plain.connection!, "session/new");
  assert.deepEqual(
    s2.mcpServers,
    [
      { name: "local", command: "node", args: ["s.js"], env: [{ name: "K", value: "v" }] },
      { type: "http", name: "web", url: "http://127.0.0.1:1/mcp", headers: [] },
    ],
    "without `acp`, stdio servers and the transports the server supports are offered as plain entries",
  );
  const stdioOnly = makeAgent(dir, { args: scriptedArgs({ caps: { mcpCapabilities: { sse: true } } }) });
  await stdioOnly.newChat();
  const [s3] = await receivedOf(stdioOnly.connection!, "session/new");
  assert.deepEqual(s3.mcpServers.map((m: { name: string }) => m.name), ["local", "old"], "sse servers only to a server that supports sse");

  __test.setConfig("openvaala.mcp.forwardVsCodeServers", false);
  const off = makeAgent(dir, { args: scriptedArgs({ caps: { mcpCapabilities: { acp: true } } }) });
  await off.newChat();
  assert.deepEqual((await receivedOf(off.connection!, "session/new"))[0].mcpServers, [], "openvaala.mcp.forwardVsCodeServers=false offers none");
});

test("Undo of a turn puts its files back on disk: edited ones restored, created ones deleted, ones edited since left alone", async () => {
  const dir = tmp();
  const a = makeAgent(dir);
  const f = (n: string) => path.join(dir, n);
  fs.writeFileSync(f("a.txt"), "after a\n");
  fs.writeFileSync(f("new.txt"), "created\n");
  fs.writeFileSync(f("b.txt"), "edited by hand\n");
  const edit = (id: string, p: string, oldText: string | null, newText: string) => ({
    update: { sessionUpdate: "tool_call", toolCallId: id, title: `Edit ${p}`, kind: "edit", status: "completed", content: [{ type: "diff", path: p, oldText, newText }] },
  });
  await a.prompt(script(edit("t1", f("a.txt"), "before a\n", "after a\n"), edit("t2", f("new.txt"), null, "created\n"), edit("t3", f("b.txt"), "b0\n", "b1\n")));
  const item = a.state.items.find((i) => i.kind === "changes");
  assert.ok(item, "the turn lists its changed files");
  assert.deepEqual(a.changedFile(item.id, f("a.txt")), { path: f("a.txt"), before: "before a\n", after: "after a\n" }, "a file's change is there for the diff editor");
  await a.undoTurn(item.id);
  assert.equal(fs.readFileSync(f("a.txt"), "utf8"), "before a\n", "an edited file is restored");
  assert.equal(fs.existsSync(f("new.txt")), false, "a file the turn created is deleted");
  assert.equal(fs.readFileSync(f("b.txt"), "utf8"), "edited by hand\n", "a file changed after the turn is not overwritten");
  const undone = a.state.items.find((i) => i.id === item.id) as { undo?: { path: string; result: string }[] };
  assert.deepEqual(undone.undo?.map((o) => o.result), ["restored", "deleted", "changed-since"], "the chat says what Undo did per file");
  await a.undoTurn(item.id);
  assert.equal(fs.readFileSync(f("a.txt"), "utf8"), "before a\n", "a second Undo does nothing");
});

test("with openvaala.traceTraffic on, every JSON-RPC line both ways goes to the traffic output; off, nothing", async () => {
  const traffic = vscode.window.createOutputChannel("traffic test");
  const on = makeAgent(tmp(), { traffic });
  __test.setConfig("openvaala.traceTraffic", true);
  await on.prompt("hello");
  const lines = (__test.state.outputs.get("traffic test") ?? []).join("");
  assert.match(lines, / → \{"jsonrpc":"2.0","id":\d+,"method":"initialize"/, "requests to the server are recorded");
  assert.match(lines, / ← .*"stopReason":"end_turn"/, "answers from the server are recorded");
  assert.match(lines, / ← .*echo: hello/, "and its notifications");
  await on.stop();
  const before = (__test.state.outputs.get("traffic test") ?? []).length;
  __test.setConfig("openvaala.traceTraffic", false);
  const off = makeAgent(tmp(), { traffic });
  await off.prompt("quiet");
  assert.equal((__test.state.outputs.get("traffic test") ?? []).length, before, "nothing is recorded when tracing is off");
});
