// The VS Code glue against the hand-written `vscode` stub (loaded by register-vscode-stub.mjs):
// fs through documents / WorkspaceEdit, activation and commands, MCP inputs in SecretStorage,
// config check diagnostics, one agent per folder with restart, a real prompt through FolderAgent.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import * as vscode from "vscode";
import { MemorySecrets } from "./memorySecrets.js";
import { __test } from "./stubs/vscode.js";
import { readTextFile, writeTextFile } from "../src/vscode/fsHost.js";
import { collectMcpServers } from "../src/vscode/mcpSources.js";
import { configCheck } from "../src/vscode/configCheckCommand.js";
import { activate, configRoot, COMMANDS } from "../src/vscode/extension.js";
import { EXT_ROOT, agentBinary, binaryMissing, startFakeModel, makeConfigHome, makeWorkspace, agentEnv, waitUntil } from "./util.js";

const pkg = JSON.parse(fs.readFileSync(path.join(EXT_ROOT, "package.json"), "utf8"));

function tmp(prefix = "ovx-") {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

function fakeContext(globalStorage = path.join(tmp(), "User", "globalStorage", "openvaala.openvaala")) {
  return {
    subscriptions: [] as { dispose(): unknown }[],
    extensionUri: vscode.Uri.file(EXT_ROOT),
    globalStorageUri: vscode.Uri.file(globalStorage),
    secrets: new MemorySecrets(),
    extension: { packageJSON: pkg },
  } as unknown as vscode.ExtensionContext;
}

function folder(p: string, name = path.basename(p)) {
  return { uri: vscode.Uri.file(p), name, index: 0 } as vscode.WorkspaceFolder;
}

beforeEach(() => __test.reset());

test("fs/read_text_file sees unsaved edits of an open document; line/limit apply", async () => {
  const dir = tmp();
  const file = path.join(dir, "a.txt");
  fs.writeFileSync(file, "on disk\n");
  assert.equal((await readTextFile({ sessionId: "s", path: file })).content, "on disk\n");
  __test.openDocument(file, "one\ntwo (unsaved)\nthree\n");
  assert.equal((await readTextFile({ sessionId: "s", path: file })).content, "one\ntwo (unsaved)\nthree\n");
  assert.equal((await readTextFile({ sessionId: "s", path: file, line: 2, limit: 1 })).content, "two (unsaved)");
  await assert.rejects(readTextFile({ sessionId: "s", path: path.join(dir, "missing.txt") }));
});

test("fs/write_text_file: a WorkspaceEdit for an open document (undoable), workspace.fs otherwise", async () => {
  const dir = tmp();
  const open = path.join(dir, "open.txt");
  fs.writeFileSync(open, "old\n");
  const doc = __test.openDocument(open, "old\n");
  await writeTextFile({ sessionId: "s", path: open, content: "new\n" });
  assert.equal(__test.state.appliedEdits.length, 1, "went through applyEdit");
  assert.equal(doc.getText(), "new\n");
  assert.deepEqual(doc.undoStack, ["old\n"], "the buffer's previous text is on the undo stack");
  assert.equal(fs.readFileSync(open, "utf8"), "new\n", "and saved");
  const closed = path.join(dir, "sub", "closed.txt");
  await writeTextFile({ sessionId: "s", path: closed, content: "x" });
  assert.equal(fs.readFileSync(closed, "utf8"), "x");
  assert.equal(__test.state.appliedEdits.length, 1);
});

test("activate registers every command and the view declared in package.json", async () => {
  const ctx = fakeContext();
  const api = activate(ctx);
  try {
    const declared = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual([...__test.state.commands.keys()].sort(), declared);
    assert.deepEqual(Object.values(COMMANDS).sort(), declared);
    assert.ok(__test.state.webviewProviders.has(pkg.contributes.views.openvaala[0].id));
    for (const m of pkg.contributes.menus["view/title"]) assert.ok(declared.includes(m.command));
    assert.ok(pkg.contributes.configuration.properties["openvaala.path"]);
    assert.equal(configRoot({ OPENVAALA_CONFIG_DIR: "/c" }), "/c");
    assert.equal(configRoot({ XDG_CONFIG_HOME: "/x" }), path.join("/x", "openvaala"));
  } finally {
    await api.dispose();
  }
});

test("MCP sources: workspace + user mcp.json + settings; ${input:} asked once and kept in SecretStorage", async () => {
  const ws = tmp();
  fs.mkdirSync(path.join(ws, ".vscode"));
  fs.writeFileSync(
    path.join(ws, ".vscode", "mcp.json"),
    `{ // workspace
      "inputs": [{"type": "promptString", "id": "tok", "password": true}],
      "servers": {"w": {"command": "node", "args": ["\${workspaceFolder}/s.js"], "env": {"T": "\${input:tok}"}},},
    }`,
  );
  const gs = path.join(tmp(), "User", "globalStorage", "openvaala.openvaala");
  fs.mkdirSync(path.dirname(path.dirname(gs)), { recursive: true });
  fs.writeFileSync(path.join(path.dirname(path.dirname(gs)), "mcp.json"), `{"servers": {"u": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"A": "\${input:tok}"}}}}`);
  __test.setConfig("mcp.servers", { s: { command: "x" } });
  __test.state.inputAnswers.push("secret-1");
  const secrets = new MemorySecrets();
  const r = await collectMcpServers(folder(ws), gs, secrets as unknown as vscode.SecretStorage);
  assert.deepEqual(r.problems, []);
  assert.deepEqual(r.servers.map((s) => s.name).sort(), ["s", "u", "w"]);
  const w = r.servers.find((s) => s.name === "w")!;
  assert.ok(w.type === "stdio" && w.env.T === "secret-1" && w.args[0] === `${ws}/s.js`);
  assert.equal(__test.state.inputPrompts.length, 1, "asked once for two uses");
  assert.equal(__test.state.inputPrompts[0].password, true);
  // a second collection (e.g. after a restart) does not ask again
  const r2 = await collectMcpServers(folder(ws), gs, secrets as unknown as vscode.SecretStorage);
  assert.equal(__test.state.inputPrompts.length, 1);
  assert.equal(r2.servers.length, 3);
  assert.equal([...secrets.map.values()][0], "secret-1");
});

test("config check: JSON problems become diagnostics per file", async () => {
  const dir = tmp();
  const fakeBin = path.join(dir, "fake-openvaala");
  const cfg = path.join(dir, "config.yaml");
  fs.writeFileSync(
    fakeBin,
    `#!/bin/sh\necho '{"ok": false, "errors": [{"path": "${cfg}", "line": 3, "message": "unknown key bogus"}, {"path": "${cfg}", "line": 7, "column": 2, "message": "x", "severity": "warning"}]}'\nexit 1\n`,
  );
  fs.chmodSync(fakeBin, 0o755);
  const coll = vscode.languages.createDiagnosticCollection("t");
  const r = await configCheck(fakeBin, dir, process.env, coll);
  assert.equal(r.code, 1);
  assert.equal(r.problems.length, 2);
  const diags = __test.state.diagnostics.get("t")!.get(cfg)!;
  assert.equal(diags.length, 2);
  assert.equal(diags[0]!.range.start.line, 2);
  assert.equal(diags[0]!.severity, vscode.DiagnosticSeverity.Error);
  assert.equal(diags[1]!.severity, vscode.DiagnosticSeverity.Warning);
  assert.equal(diags[0]!.message, "unknown key bogus");
});

const skip = binaryMissing();

test("FolderAgent: one server per folder, a real prompt into the chat state, restart with a notice, stop on folder removal", { skip, timeout: 60000 }, async () => {
  const fake = await startFakeModel([{ text: "Hi from the *fake* model." }, { text: "Second answer." }]);
  const home = await makeConfigHome(fake.url);
  const ws = await makeWorkspace({ "a.txt": "a\n" });
  const ws2 = await makeWorkspace({});
  __test.setConfig("openvaala.path", agentBinary());
  __test.setConfig("openvaala.env", (await agentEnv(home.env)) as Record<string, string>);
  const f1 = folder(ws, "one");
  const f2 = folder(ws2, "two");
  (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = [f1, f2];
  const api = activate(fakeContext());
  try {
    const a = api.agentFor(f1);
    assert.equal(api.agentFor(f1), a, "one agent per folder");
    assert.notEqual(api.agentFor(f2), a);
    assert.equal(a.running, false, "started on demand only");
    const r = await a.prompt("hello");
    assert.equal(r?.stopReason, "end_turn");
    assert.equal(a.running, true);
    assert.equal(api.agentFor(f2).running, false);
    const agentItems = a.state.items.filter((i) => i.kind === "agent");
    assert.equal((agentItems[0] as { text: string }).text, "Hi from the *fake* model.");
    // the chat view's model reflects it
    api.chat.selectFolder(f1.uri.toString());
    const vm = api.chat.model();
    assert.equal(vm.folders.length, 2);
    assert.deepEqual(vm.chat.items.map((i) => i.kind), ["user", "agent", "usage"], "the prompt, the answer and the turn's tokens");

    // crash: restarted with a notice
    const pid = a.connection!.pid;
    a.connection!.killGroup("SIGKILL");
    await waitUntil(() => a.running && a.connection!.pid !== pid, 10000, "restart");
    assert.ok(__test.state.messages.some((m) => m.level === "warning" && /restarting/.test(m.text)), JSON.stringify(__test.state.messages));
    assert.ok(a.state.items.some((i) => i.kind === "notice"));
    const r2 = await a.prompt("again");
    assert.equal(r2?.stopReason, "end_turn");

    // folder removed: its server stops
    const child = a.connection!.child!;
    (vscode.workspace as { workspaceFolders: unknown }).workspaceFolders = [f2];
    __test.state.folderEvents.fire({ added: [], removed: [f1] });
    await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 5000, "stop on folder removal");
    assert.equal(api.agents.has(f1.uri.toString()), false);
  } finally {
    await api.dispose();
    await fake.close();
  }
});

test("the esbuild bundle (dist/extension.cjs) loads and activates against the stub", { skip: !fs.existsSync(path.join(EXT_ROOT, "dist", "extension.cjs")) && "run `npm run bundle` first" }, async () => {
  const require = createRequire(import.meta.url);
  const Module = require("node:module");
  const orig = Module._resolveFilename;
  Module._resolveFilename = function (request: string, ...rest: unknown[]) {
    if (request === "vscode") return path.join(EXT_ROOT, "out", "test", "stubs", "vscode.js");
    return orig.call(this, request, ...rest);
  };
  try {
    const ext = require(path.join(EXT_ROOT, "dist", "extension.cjs"));
    assert.equal(typeof ext.activate, "function");
    assert.equal(typeof ext.deactivate, "function");
  } finally {
    Module._resolveFilename = orig;
  }
});

test("the bundle never reads the `navigator` global (VS Code 1.139 logs a migration error when an extension does)", { skip: !fs.existsSync(path.join(EXT_ROOT, "dist", "extension.cjs")) && "run `npm run bundle` first" }, () => {
  const bundle = fs.readFileSync(path.join(EXT_ROOT, "dist", "extension.cjs"), "utf8");
  const uses = bundle.match(/.{0,40}(?<![.\w$"'])navigator\b.{0,40}/g) ?? [];
  assert.deepEqual(uses, [], "no free `navigator` reference in dist/extension.cjs");
});
