// Where an agent's edit is highlighted in the editor after it (src/core/editHighlight.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { changedLineRanges, lineOffsetIn, newlyCompletedDiffs } from "../src/core/editHighlight.js";
import type { ToolCallState } from "../src/core/chatState.js";

const text = (...l: string[]) => l.join("\n");

const cases: { promise: string; old: string; new: string; want: [number, number][] }[] = [
  { promise: "no change, nothing highlighted", old: text("a", "b"), new: text("a", "b"), want: [] },
  { promise: "a changed line in the middle is highlighted alone", old: text("a", "b", "c"), new: text("a", "B", "c"), want: [[1, 1]] },
  { promise: "lines inserted at the start are highlighted", old: text("c"), new: text("a", "b", "c"), want: [[0, 1]] },
  { promise: "a line appended at the end is highlighted", old: text("a", "b"), new: text("a", "b", "c"), want: [[2, 2]] },
  { promise: "a deleted line marks the line that now stands where it was", old: text("a", "x", "b", "c"), new: text("a", "b", "c"), want: [[1, 1]] },
  { promise: "a deletion at the end marks the last line", old: text("a", "b", "x"), new: text("a", "b"), want: [[1, 1]] },
  { promise: "two separate edits give two ranges", old: text("a", "b", "c", "d", "e"), new: text("A", "b", "c", "d", "E"), want: [[0, 0], [4, 4]] },
  { promise: "a block replaced by more lines is one range over all new lines", old: text("k", "x", "k2"), new: text("k", "1", "2", "3", "k2"), want: [[1, 3]] },
  { promise: "a created file is highlighted whole", old: "", new: text("a", "b"), want: [[0, 1]] },
  { promise: "an emptied file marks its first line", old: text("a", "b"), new: "", want: [[0, 0]] },
  { promise: "a line repeated after the inserted block is highlighted with it (only the common end is left out)", old: text("A", "k"), new: text("B", "k", "k"), want: [[0, 1]] },
  { promise: "unchanged lines between edits stay unhighlighted (LCS, not just head and tail)", old: text("a", "same", "b"), new: text("A", "same", "B"), want: [[0, 0], [2, 2]] },
];
for (const c of cases) {
  test(`changed lines: ${c.promise}`, () => {
    assert.deepEqual(changedLineRanges(c.old, c.new).map((r) => [r.start, r.end]), c.want, c.promise);
  });
}

test("the edit's text is found in the document: at line 0 when equal, at its line when inside, undefined when gone", () => {
  assert.equal(lineOffsetIn("a\nb\n", "a\nb\n"), 0, "equal texts start at line 0");
  assert.equal(lineOffsetIn("x\ny\nfoo\nbar\n", "foo\nbar"), 2, "a partial text starts at its line");
  assert.equal(lineOffsetIn("x\nfoo", "foo"), 1, "newlines before the match are counted, not after");
  assert.equal(lineOffsetIn("foo\nbar", "foo"), 0, "a text at the very start of a longer document is at line 0");
  assert.equal(lineOffsetIn("x\n\ny", "\n\ny"), 0, "a text that starts with a newline starts on the line of that newline");
  assert.equal(lineOffsetIn("something else", "foo"), undefined, "a document without the text gets no highlight");
  assert.equal(lineOffsetIn("text", ""), undefined, "an empty new text is not located in a non-empty document");
  assert.equal(lineOffsetIn("", ""), 0, "an empty document holds an empty text");
});

const tool = (status: ToolCallState["status"], content: ToolCallState["content"]): ToolCallState => ({ toolCallId: "t", title: "t", kind: "edit", status, content, locations: [], rev: 1 });
const diff = (oldText: string | null, newText: string) => ({ type: "diff" as const, path: "/w/a", oldText, newText });

test("an edit's diffs open once, when its tool call becomes completed", () => {
  const d = diff("a", "b");
  assert.deepEqual(newlyCompletedDiffs(tool("in_progress", [d]), tool("completed", [d])), [d], "in progress -> completed opens its diff");
  assert.deepEqual(newlyCompletedDiffs(undefined, tool("completed", [d])), [d], "a tool call that arrives completed opens its diff");
  assert.deepEqual(newlyCompletedDiffs(tool("completed", [d]), tool("completed", [d])), [], "a later update of a completed call does not open it again");
  assert.deepEqual(newlyCompletedDiffs(tool("pending", [d]), tool("failed", [d])), [], "a failed edit opens nothing");
  assert.deepEqual(newlyCompletedDiffs(tool("pending", [d]), tool("in_progress", [d])), [], "an edit still running opens nothing");
  assert.deepEqual(newlyCompletedDiffs(tool("pending", []), undefined), [], "no tool call, nothing");
  const text = { type: "content" as const, content: { type: "text" as const, text: "x" } };
  assert.deepEqual(newlyCompletedDiffs(undefined, tool("completed", [text, diff("same", "same"), diff(null, "new")])), [diff(null, "new")], "only diffs that change something; a created file counts");
  assert.deepEqual(newlyCompletedDiffs(undefined, tool("completed", [diff(null, "")])), [], "an empty file created has nothing to show");
});
