// Where an agent's edit landed, for highlighting it in the editor after the diff opens: the lines
// of the new text that were added or changed, and for a pure deletion the line where text went.
// Also which edits a tool call update has just completed. No `vscode` import.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { commonEnds, lcsDiff } from "./lineDiff.js";
import type { ToolCallState } from "./chatState.js";

/** 0-based, inclusive line numbers in the new text */
export interface LineRange {
  start: number;
  end: number;
}

/** The lines of `newText` that `oldText` -> `newText` added or changed; a deletion marks the line after it. */
export function changedLineRanges(oldText: string, newText: string): LineRange[] {
  const { a, b, head, tail } = commonEnds(oldText, newText);
  const ranges: LineRange[] = [];
  const mark = (line: number) => {
    const last = ranges[ranges.length - 1];
    if (last && line <= last.end + 1) last.end = Math.max(last.end, line);
    else ranges.push({ start: line, end: line });
  };
  let j = head;
  for (const op of lcsDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail))) {
    if (op.op === "+") mark(j++);
    else if (op.op === " ") j++;
    else mark(Math.min(j, b.length - 1)); // a removed line: mark where it was
  }
  return ranges;
}

/**
 * The line of `docText` where `newText` starts (0 when they are equal), or undefined when the
 * document does not contain it (edited since, or the diff covers a different text).
 */
export function lineOffsetIn(docText: string, newText: string): number | undefined {
  if (docText === newText) return 0;
  const at = newText ? docText.indexOf(newText) : -1;
  if (at < 0) return undefined;
  let line = 0;
  for (let i = 0; i < at; i++) if (docText.charCodeAt(i) === 10) line++;
  return line;
}

export type Diff = Extract<acp.ToolCallContent, { type: "diff" }>;

/** the diffs of an edit that this update completed (none when it was completed before, or is not completed) */
export function newlyCompletedDiffs(before: ToolCallState | undefined, after: ToolCallState | undefined): Diff[] {
  if (!after || after.status !== "completed" || before?.status === "completed") return [];
  return after.content.filter((c): c is Diff => c.type === "diff" && (c.oldText ?? "") !== c.newText);
}
