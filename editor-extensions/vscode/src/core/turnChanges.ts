// The files a turn changed, from its completed edit tool calls: each file's text before the turn
// (the first diff's oldText; null for a file the turn created) and after it (the last diff's
// newText). The chat lists them after the turn with "open diff" and "undo". No `vscode` import.
import type { ToolCallState } from "./chatState.js";

export interface FileChange {
  path: string;
  /** null: the file did not exist before the turn */
  before: string | null;
  after: string;
}

export function turnChanges(toolCalls: readonly ToolCallState[]): FileChange[] {
  const byPath = new Map<string, FileChange>();
  for (const t of toolCalls) {
    if (t.status !== "completed") continue; // a rejected or failed edit changed nothing
    for (const c of t.content) {
      if (c.type !== "diff") continue;
      const seen = byPath.get(c.path);
      if (seen) seen.after = c.newText;
      else byPath.set(c.path, { path: c.path, before: c.oldText ?? null, after: c.newText });
    }
  }
  return [...byPath.values()].filter((f) => f.before !== f.after);
}

export type UndoOutcome = { path: string; result: "restored" | "deleted" | "changed-since" | "failed"; message?: string };

/** what undoing one file does, given its text on disk now (undefined: the file is gone) */
export function undoPlan(f: FileChange, now: string | undefined): "write" | "delete" | "changed-since" {
  if (now !== f.after) return "changed-since"; // someone edited it after the turn: never overwrite that
  return f.before === null ? "delete" : "write";
}
