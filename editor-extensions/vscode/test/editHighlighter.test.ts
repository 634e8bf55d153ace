// After an edit: its diff opens (openvaala.openDiffAfterEdit) and the edited lines are highlighted
// in theme colours until the user edits the file or the next turn starts (src/vscode/diff.ts).
import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import { __test, StubEditor } from "./stubs/vscode.js";
import { DiffContentProvider, EditHighlighter } from "../src/vscode/diff.js";

const made: EditHighlighter[] = [];
beforeEach(() => __test.reset());
afterEach(() => made.splice(0).forEach((h) => h.dispose()));

const lines = (e: StubEditor) => [...e.decorations.values()].flat().map((r) => [r.start.line, r.end.line]);
const diffOpened = () => __test.state.executed.filter((e) => e.command === "vscode.diff");

function setup(files: Record<string, string>) {
  const h = new EditHighlighter(new DiffContentProvider(), async (p) => files[p]);
  made.push(h);
  return h;
}

test("the diff opens without taking the focus, and the edited lines are highlighted in the theme's inserted-line colour", async () => {
  const doc = __test.openDocument("/w/a.txt", "one\nTWO\nthree\n");
  const editor = __test.showEditor(doc);
  const h = setup({ "/w/a.txt": "one\nTWO\nthree\n" });
  const type = __test.state.decorationTypes[0]!;
  assert.equal(type.options.backgroundColor.id, "diffEditor.insertedLineBackground", "a theme colour, not a fixed one");
  assert.equal(type.options.isWholeLine, true);
  await h.onEdit({ type: "diff", path: "/w/a.txt", oldText: "one\ntwo\nthree\n", newText: "one\nTWO\nthree\n" });
  const [open] = diffOpened();
  assert.ok(open, "the diff editor opens");
  assert.equal(open.args[2], "a.txt: edited by OpenVaala", "titled with the file");
  assert.equal(open.args[3].preserveFocus, true, "without taking the focus from the chat");
  assert.deepEqual(lines(editor), [[1, 1]], "the changed line is highlighted");
  assert.deepEqual(h.ranges("/w/a.txt").map((r) => r.start.line), [1]);
});

test("a partial diff is highlighted where its text is in the file; a file that no longer holds it gets nothing", async () => {
  const doc = __test.openDocument("/w/b.txt", "head\nhead2\nx\nNEW\n");
  const editor = __test.showEditor(doc);
  const h = setup({ "/w/b.txt": "head\nhead2\nx\nNEW\n", "/w/c.txt": "something else" });
  await h.onEdit({ type: "diff", path: "/w/b.txt", oldText: "x\nold", newText: "x\nNEW" });
  assert.deepEqual(lines(editor), [[3, 3]], "shifted by the lines before the diff's text");
  await h.onEdit({ type: "diff", path: "/w/c.txt", oldText: "a", newText: "b" });
  assert.deepEqual(h.ranges("/w/c.txt"), [], "no highlight in a file edited since");
  await h.onEdit({ type: "diff", path: "/w/gone.txt", oldText: "a", newText: "b" });
  assert.deepEqual(h.ranges("/w/gone.txt"), [], "no highlight for a file that is gone");
});

test("with openvaala.openDiffAfterEdit off only the highlight is shown; a file opened later gets it too", async () => {
  __test.setConfig("openvaala.openDiffAfterEdit", false);
  const h = setup({ "/w/a.txt": "new\n" });
  await h.onEdit({ type: "diff", path: "/w/a.txt", oldText: null, newText: "new\n" });
  assert.deepEqual(diffOpened(), [], "no diff editor");
  const editor = __test.showEditor(__test.openDocument("/w/a.txt", "new\n"));
  assert.deepEqual(lines(editor), [[0, 0]], "an editor shown afterwards is highlighted (a created file: all its lines)");
});

test("the highlight goes when the user edits the file, and all of them when the next turn starts", async () => {
  const a = __test.showEditor(__test.openDocument("/w/a.txt", "A\n"));
  const b = __test.showEditor(__test.openDocument("/w/b.txt", "B\n"));
  const h = setup({ "/w/a.txt": "A\n", "/w/b.txt": "B\n" });
  await h.onEdit({ type: "diff", path: "/w/a.txt", oldText: "a\n", newText: "A\n" });
  await h.onEdit({ type: "diff", path: "/w/b.txt", oldText: "b\n", newText: "B\n" });
  __test.state.documentChanges.fire({ document: a.document, contentChanges: [] });
  assert.deepEqual(lines(a), [[0, 0]], "a change event without changes (a save) keeps it");
  __test.state.documentChanges.fire({ document: a.document, contentChanges: [{}] });
  assert.deepEqual(lines(a), [], "typing in the file clears its highlight");
  assert.deepEqual(lines(b), [[0, 0]], "other files keep theirs");
  h.clear();
  assert.deepEqual(lines(b), [], "a new turn clears all");
  h.dispose();
  assert.equal(__test.state.decorationTypes[0]!.disposed, true, "the decoration type is disposed with it");
});
