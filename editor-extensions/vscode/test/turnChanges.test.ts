import { test } from "node:test";
import assert from "node:assert/strict";
import { turnChanges, undoPlan } from "../src/core/turnChanges.js";
import type { ToolCallState } from "../src/core/chatState.js";

const tool = (id: string, status: ToolCallState["status"], diffs: { path: string; oldText?: string | null; newText: string }[]): ToolCallState => ({
  toolCallId: id, title: id, kind: "edit", status, locations: [], rev: 1,
  content: diffs.map((d) => ({ type: "diff" as const, ...d })),
});

test("a turn's changed files: before = first diff's old text, after = last diff's new text; failed edits and no-ops left out", () => {
  const files = turnChanges([
    tool("t1", "completed", [{ path: "/w/a", oldText: "a0", newText: "a1" }]),
    tool("t2", "completed", [{ path: "/w/a", oldText: "a1", newText: "a2" }, { path: "/w/new", oldText: null, newText: "n" }]),
    tool("t3", "failed", [{ path: "/w/b", oldText: "b0", newText: "b1" }]),
    tool("t4", "completed", [{ path: "/w/c", oldText: "c", newText: "x" }]),
    tool("t5", "completed", [{ path: "/w/c", oldText: "x", newText: "c" }]),
  ]);
  assert.deepEqual(files, [
    { path: "/w/a", before: "a0", after: "a2" },
    { path: "/w/new", before: null, after: "n" },
  ]);
});

test("undo writes the old text back, deletes a file the turn created, and never overwrites a file edited since", () => {
  assert.equal(undoPlan({ path: "/w/a", before: "a0", after: "a2" }, "a2"), "write");
  assert.equal(undoPlan({ path: "/w/n", before: null, after: "n" }, "n"), "delete");
  assert.equal(undoPlan({ path: "/w/a", before: "a0", after: "a2" }, "edited by hand"), "changed-since");
  assert.equal(undoPlan({ path: "/w/a", before: "a0", after: "a2" }, undefined), "changed-since", "a file deleted since is not re-created");
});

test("only completed edits count: pending, running and failed ones changed nothing; other content is not a change", () => {
  const files = turnChanges([
    tool("p", "pending", [{ path: "/w/p", oldText: "p0", newText: "p1" }]),
    tool("r", "in_progress", [{ path: "/w/r", oldText: "r0", newText: "r1" }]),
    { ...tool("mixed", "completed", [{ path: "/w/m", newText: "m1" }]), content: [{ type: "content", content: { type: "text", text: "note" } }, { type: "diff", path: "/w/m", newText: "m1" }] } as ToolCallState,
    tool("f", "failed", [{ path: "/w/m", oldText: "m1", newText: "m2" }]),
  ]);
  assert.deepEqual(files, [{ path: "/w/m", before: null, after: "m1" }], "a diff without oldText is a created file; the failed later edit does not move `after`");
  assert.deepEqual(turnChanges([]), [], "a turn without edits changed nothing");
});
