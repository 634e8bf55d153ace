// The small VS Code glue against the `vscode` stub: the agent's file reads and writes, the diff
// documents, and where VS Code's MCP servers and their ${input:} values come from.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import { MemorySecrets } from "./memorySecrets.js";
import { __test } from "./stubs/vscode.js";
import { readTextFile, writeTextFile } from "../src/vscode/fsHost.js";
import { DiffContentProvider } from "../src/vscode/diff.js";
import { askInputOnce, forgetInputs, mcpSourcesFor } from "../src/vscode/mcpSources.js";

function tmp() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovhost-")));
}

beforeEach(() => __test.reset());

test("fs/read_text_file: a file that cannot be read is a 'resource not found' error naming it; text is UTF-8", async () => {
  const dir = tmp();
  const missing = path.join(dir, "nope.txt");
  await assert.rejects(readTextFile({ sessionId: "s", path: missing }), (e: Error & { code?: number }) => e.code === -32002 && e.message.startsWith(`cannot read ${missing}: `), "a missing file answers -32002 with its path");
  const f = path.join(dir, "u.txt");
  fs.writeFileSync(f, "héllo ✓\n");
  assert.equal((await readTextFile({ sessionId: "s", path: f })).content, "héllo ✓\n", "the file is read as UTF-8");
  __test.openDocument(path.join(dir, "other.txt"), "not this one");
  assert.equal((await readTextFile({ sessionId: "s", path: f })).content, "héllo ✓\n", "another open document does not answer for this file");
});

test("fs/write_text_file to an open document: the whole buffer is replaced and saved; a refused edit is an error", async () => {
  const dir = tmp();
  const f = path.join(dir, "open.txt");
  fs.writeFileSync(f, "a\nbb\nccc");
  const doc = __test.openDocument(f, "a\nbb\nccc");
  await writeTextFile({ sessionId: "s", path: f, content: "new" });
  const [edit] = __test.state.appliedEdits;
  const e = edit!.edits[0]!;
  assert.equal(e.uri.fsPath, f, "the edit is for the open document");
  assert.deepEqual([e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character], [0, 0, 2, 3], "it replaces from the start to the end of the last line");
  assert.equal(e.text, "new");
  assert.equal(doc.saves, 1, "the document is saved");
  assert.equal(fs.readFileSync(f, "utf8"), "new", "so the file on disk is what the agent wrote");
  // VS Code refusing the edit (e.g. the document went away)
  __test.state.documents.length = 0;
  const ghost = __test.openDocument(f, "x");
  const orig = vscode.workspace.applyEdit;
  (vscode.workspace as { applyEdit: unknown }).applyEdit = async () => false;
  try {
    await assert.rejects(writeTextFile({ sessionId: "s", path: f, content: "y" }), new RegExp(`VS Code refused the edit to ${f}`), "a refused edit is reported to the agent");
  } finally {
    (vscode.workspace as { applyEdit: unknown }).applyEdit = orig;
  }
  assert.equal(ghost.saves, 0, "a refused edit is not saved");
});

test("diff documents: each side is its own read-only document", () => {
  const d = new DiffContentProvider();
  const a = d.uriFor("/w/a.txt", "before", "old");
  const b = d.uriFor("/w/a.txt", "after", "new");
  const c = d.uriFor("/w/a.txt", "before", "older");
  assert.equal(a.scheme, DiffContentProvider.scheme);
  assert.equal(DiffContentProvider.scheme, "openvaala-diff");
  assert.deepEqual([d.provideTextDocumentContent(a), d.provideTextDocumentContent(b), d.provideTextDocumentContent(c)], ["old", "new", "older"], "every side keeps its own text");
  assert.equal(d.provideTextDocumentContent(vscode.Uri.from({ scheme: "openvaala-diff", path: "/x", query: "unknown" })), "", "an unknown document is empty");
});

test("diff editor title: the file name and the tool call, or a default", async () => {
  const d = new DiffContentProvider();
  await d.open("/w/sub/a.txt", "o", "n");
  const [call] = __test.state.executed;
  assert.equal(call!.command, "vscode.diff");
  assert.equal(call!.args[2], "a.txt: OpenVaala edit", "without a title the diff is an OpenVaala edit");
  await d.open("/w/b.txt", "o", "n", "");
  assert.equal(__test.state.executed[1]!.args[2], "b.txt: OpenVaala edit", "an empty title too");
});

test("${input:} values: asked once with the input's description, kept in SecretStorage; a declined one is not kept", async () => {
  const secrets = new MemorySecrets();
  const s = secrets as unknown as vscode.SecretStorage;
  __test.state.inputAnswers.push("typed");
  assert.equal(await askInputOnce(s, { id: "tok", type: "promptString", description: "API token", password: true, default: "dflt" }), "typed");
  assert.deepEqual(__test.state.inputPrompts[0], { title: 'MCP input "tok"', prompt: "API token", password: true, value: "dflt", ignoreFocusOut: true }, "the question shows the input's description, hides a password, offers the default");
  assert.equal(secrets.map.get("openvaala.mcp.input.tok"), "typed", "the answer is kept in SecretStorage");
  assert.equal(await askInputOnce(s, { id: "tok", type: "promptString" }), "typed", "a kept answer is reused");
  assert.equal(__test.state.inputPrompts.length, 1, "without asking again");
  __test.state.inputAnswers.push(undefined);
  assert.equal(await askInputOnce(s, { id: "plain", type: "promptString" }), undefined, "a declined question gives no value");
  assert.deepEqual(__test.state.inputPrompts[1], { title: 'MCP input "plain"', prompt: "Value for ${input:plain}", password: false, value: "", ignoreFocusOut: true }, "an undescribed input names the variable; no password, no default");
  assert.equal(secrets.map.has("openvaala.mcp.input.plain"), false, "a declined answer is not kept");
  __test.state.inputAnswers.push("two");
  assert.equal(await askInputOnce(s, { id: "pick", type: "pickString", options: ["one", "two"], description: "Which" }), "two", "a pickString input is picked from its options");
  assert.deepEqual(__test.state.inputPrompts[2], { title: 'MCP input "pick"', placeHolder: "Which", ignoreFocusOut: true }, "the pick shows the description");
  __test.state.inputAnswers.push("x");
  await askInputOnce(s, { id: "pick2", type: "pickString", options: ["x"] });
  assert.equal(__test.state.inputPrompts[3].placeHolder, "pick2", "an undescribed pick shows the id");
  __test.state.inputAnswers.push("free");
  await askInputOnce(s, { id: "noopts", type: "pickString", options: [] });
  assert.equal(__test.state.inputPrompts[4].prompt, "Value for ${input:noopts}", "a pick without options is asked as text");
  await forgetInputs(s, ["tok", "pick"]);
  assert.deepEqual([...secrets.map.keys()].sort(), ["openvaala.mcp.input.noopts", "openvaala.mcp.input.pick2"], "forgetting inputs removes their kept values");
});

test("MCP sources of a folder: the user's mcp.json, the mcp.servers setting (when it has servers), the folder's .vscode/mcp.json", () => {
  const ws = tmp();
  const gs = path.join(tmp(), "User", "globalStorage", "openvaala.openvaala");
  assert.deepEqual(mcpSourcesFor({ uri: vscode.Uri.file(ws), name: "w", index: 0 }, gs), [], "no files and no setting: no sources");
  fs.mkdirSync(path.dirname(path.dirname(gs)), { recursive: true });
  const userFile = path.join(path.dirname(path.dirname(gs)), "mcp.json");
  fs.writeFileSync(userFile, '{"servers": {"u": {"command": "u"}}}');
  fs.mkdirSync(path.join(ws, ".vscode"));
  fs.writeFileSync(path.join(ws, ".vscode", "mcp.json"), '{"servers": {"w": {"command": "w"}}}');
  __test.setConfig("mcp.servers", {});
  const noSetting = mcpSourcesFor({ uri: vscode.Uri.file(ws), name: "w", index: 0 }, gs);
  assert.deepEqual(noSetting.map((s) => [s.kind, s.origin]), [["user", userFile], ["workspace", path.join(ws, ".vscode", "mcp.json")]], "an empty mcp.servers setting is no source");
  __test.setConfig("mcp.servers", { s: { command: "s" } });
  __test.setConfig("mcp.inputs", [{ id: "i", type: "promptString" }]);
  const all = mcpSourcesFor({ uri: vscode.Uri.file(ws), name: "w", index: 0 }, gs);
  assert.deepEqual(all.map((s) => [s.kind, s.origin, Object.keys(s.config.servers)]), [["user", userFile, ["u"]], ["settings", "settings (mcp.servers)", ["s"]], ["workspace", path.join(ws, ".vscode", "mcp.json"), ["w"]]], "all three sources, each with its servers");
  assert.deepEqual(all[1]!.config.inputs.map((i) => i.id), ["i"], "the setting's inputs come along");
  __test.state.config.delete("mcp.inputs");
  assert.deepEqual(mcpSourcesFor({ uri: vscode.Uri.file(ws), name: "w", index: 0 }, gs)[1]!.config.problems, [], "a setting without inputs is fine");
});
