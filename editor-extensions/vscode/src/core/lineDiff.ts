// A compact line diff for showing a proposed edit inline (permission prompts, turn summaries).
// Common leading and trailing lines are trimmed; the middle is an LCS diff, or for very large
// middles a plain "all removed, all added" listing. No `vscode` import.

export interface DiffLine {
  op: " " | "-" | "+";
  text: string;
}

const MAX_LCS_CELLS = 250_000;
const CONTEXT = 2;

/** the LCS diff of two line lists (every line, no context trimming) */
export function lcsDiff(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > MAX_LCS_CELLS) return [...a.map((text) => ({ op: "-" as const, text })), ...b.map((text) => ({ op: "+" as const, text }))];
  const n = a.length;
  const m = b.length;
  const len: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) len[i]![j] = a[i] === b[j] ? len[i + 1]![j + 1]! + 1 : Math.max(len[i + 1]![j]!, len[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: " ", text: a[i++]! });
      j++;
    } else if (i < n && (j >= m || len[i + 1]![j]! >= len[i]![j + 1]!)) out.push({ op: "-", text: a[i++]! });
    else out.push({ op: "+", text: b[j++]! });
  }
  return out;
}

/** both texts' lines and how many lines they share at the start (head) and, after that, at the end (tail) */
export function commonEnds(oldText: string, newText: string): { a: string[]; b: string[]; head: number; tail: number } {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { a, b, head, tail };
}

/** The changed lines of `oldText` -> `newText` with a little context; empty when nothing changed. */
export function lineDiff(oldText: string, newText: string): DiffLine[] {
  if (oldText === newText) return [];
  const { a, b, head, tail } = commonEnds(oldText, newText);
  const before = a.slice(Math.max(0, head - CONTEXT), head).map((text) => ({ op: " " as const, text }));
  const after = a.slice(a.length - tail, a.length - tail + CONTEXT).map((text) => ({ op: " " as const, text }));
  return [...before, ...lcsDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail)), ...after];
}
