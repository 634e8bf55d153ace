// Exact output of the inline line diff (src/core/lineDiff.ts) that the permission prompt and turn
// summaries render as `${op} ${text}` lines. Expected lines are written as op + text: " ctx", "-old",
// "+new" (an op alone is an empty line).
import { test } from "node:test";
import assert from "node:assert/strict";
import { lineDiff, type DiffLine } from "../src/core/lineDiff.js";

const lines = (...l: string[]): DiffLine[] => l.map((s) => ({ op: s[0] as DiffLine["op"], text: s.slice(1) }));
const text = (...l: string[]): string => l.join("\n");

interface Case { promise: string; old: string; new: string; want: string[] }

const cases: Case[] = [
  // nothing changed
  { promise: "identical texts give no lines", old: text("a", "b", "c"), new: text("a", "b", "c"), want: [] },
  { promise: "identical texts ending in a newline give no lines", old: "a\n", new: "a\n", want: [] },
  { promise: "both sides empty give no lines", old: "", new: "", want: [] },

  // insert
  { promise: "an insert at the start: the added line, then two lines of context after", old: text("b", "c", "d"), new: text("a", "b", "c", "d"), want: ["+a", " b", " c"] },
  { promise: "an insert in the middle: two context lines either side, no more", old: text("a", "b", "c", "d", "e", "f"), new: text("a", "b", "c", "X", "d", "e", "f"), want: [" b", " c", "+X", " d", " e"] },
  { promise: "an insert at the end: two context lines before, none after", old: text("a", "b", "c"), new: text("a", "b", "c", "d"), want: [" b", " c", "+d"] },
  { promise: "several lines inserted together stay in order", old: text("a", "z"), new: text("a", "1", "2", "3", "z"), want: [" a", "+1", "+2", "+3", " z"] },

  // delete
  { promise: "a delete at the start: the removed line, then two lines of context after", old: text("a", "b", "c", "d"), new: text("b", "c", "d"), want: ["-a", " b", " c"] },
  { promise: "a delete in the middle: two context lines either side, no more", old: text("a", "b", "c", "X", "d", "e", "f"), new: text("a", "b", "c", "d", "e", "f"), want: [" b", " c", "-X", " d", " e"] },
  { promise: "a delete at the end: two context lines before, none after", old: text("a", "b", "c", "d"), new: text("a", "b", "c"), want: [" b", " c", "-d"] },

  // replace
  { promise: "a replace at the start: removed before added, then context", old: text("a", "b", "c", "d"), new: text("A", "b", "c", "d"), want: ["-a", "+A", " b", " c"] },
  { promise: "a replace in the middle: removed before added, two context lines either side", old: text("1", "2", "3", "4", "5"), new: text("1", "2", "X", "4", "5"), want: [" 1", " 2", "-3", "+X", " 4", " 5"] },
  { promise: "a replace at the end: context, then removed before added", old: text("a", "b", "c", "d"), new: text("a", "b", "c", "D"), want: [" b", " c", "-d", "+D"] },
  { promise: "a block replaced: all its removed lines first, then all its added lines", old: text("k", "a", "b", "k"), new: text("k", "A", "B", "k"), want: [" k", "-a", "-b", "+A", "+B", " k"] },
  { promise: "a single-line text replaced: one removed and one added line, no context", old: "x", new: "y", want: ["-x", "+y"] },

  // context is at most two lines and only what exists
  { promise: "one unchanged line before and after: one context line each side", old: text("a", "x", "z"), new: text("a", "y", "z"), want: [" a", "-x", "+y", " z"] },
  { promise: "far-away unchanged lines are left out: only two context lines each side", old: text("1", "2", "3", "4", "x", "5", "6", "7", "8"), new: text("1", "2", "3", "4", "y", "5", "6", "7", "8"), want: [" 3", " 4", "-x", "+y", " 5", " 6"] },

  // empty sides (a file the edit creates has old text ""; split on "\n", "" is one empty line)
  { promise: "empty old side, new text without a final newline: the empty line removed, the new lines added", old: "", new: "x", want: ["-", "+x"] },
  { promise: "empty old side, new text with a final newline: the new lines added, the empty last line as context", old: "", new: text("a", "b", "c", ""), want: ["+a", "+b", "+c", " "] },
  { promise: "empty new side, old text without a final newline: the old lines removed, an empty line added", old: "x", new: "", want: ["-x", "+"] },
  { promise: "empty new side, old text with a final newline: the old lines removed, the empty last line as context", old: text("a", "b", ""), new: "", want: ["-a", "-b", " "] },

  // trailing newline
  { promise: "a final newline added shows as an added empty line", old: text("a", "b"), new: text("a", "b", ""), want: [" a", " b", "+"] },
  { promise: "a final newline removed shows as a removed empty line", old: text("a", "b", ""), new: text("a", "b"), want: [" a", " b", "-"] },
  { promise: "a change before a final newline keeps the empty last line as context (as the prompt shows it)", old: "one\ntwo\nthree\n", new: "one\n2\nthree\n", want: [" one", "-two", "+2", " three", " "] },
  { promise: "a trailing-space difference is a change", old: text("a", "b ", "c"), new: text("a", "b", "c"), want: [" a", "-b ", "+b", " c"] },

  // repeated lines: the common head and tail never overlap
  { promise: "a repeat of the last line appended: one added line, not a shifted copy", old: text("a", "b"), new: text("a", "b", "b"), want: [" a", " b", "+b"] },
  { promise: "a repeat of the last line removed: one removed line", old: text("a", "b", "b"), new: text("a", "b"), want: [" a", " b", "-b"] },
  { promise: "a line added to a run of equal lines: one added line with context", old: text("a", "x", "x", "b"), new: text("a", "x", "x", "x", "b"), want: [" x", " x", "+x", " b"] },
  { promise: "a line removed from a run of equal lines: one removed line with context", old: text("a", "x", "x", "x", "b"), new: text("a", "x", "x", "b"), want: [" x", " x", "-x", " b"] },
  { promise: "a repeat of the first line prepended: one added line", old: text("a", "b"), new: text("a", "a", "b"), want: [" a", "+a", " b"] },

  // the changed middle is a minimal (LCS) diff
  { promise: "separated hunks: both shown, with every unchanged line between them", old: text("1", "2", "3", "4", "5", "6", "7", "8", "9"), new: text("1", "X", "3", "4", "5", "6", "7", "Y", "9"), want: [" 1", "-2", "+X", " 3", " 4", " 5", " 6", " 7", "-8", "+Y", " 9"] },
  { promise: "a line moved down past one other: the shorter diff (added before, kept, removed after)", old: text("B", "C"), new: text("A", "B"), want: ["+A", " B", "-C"] },
  { promise: "a line dropped at the start and one added at the end: kept lines stay unchanged", old: text("A", "B", "C"), new: text("B", "C", "X"), want: ["-A", " B", " C", "+X"] },
  { promise: "old lines past the last kept line are removed after it", old: text("A", "B", "C"), new: "B", want: ["-A", " B", "-C"] },
  { promise: "new lines past the last kept line are added after it", old: "B", new: text("A", "B", "C"), want: ["+A", " B", "+C"] },
  { promise: "swapped lines: one kept, the other removed and added", old: text("a", "b"), new: text("b", "a"), want: ["-a", " b", "+a"] },
];

for (const c of cases) {
  test(`lineDiff: ${c.promise}`, () => {
    assert.deepEqual(lineDiff(c.old, c.new), lines(...c.want), c.promise);
  });
}

test("lineDiff: every line is a plain { op, text } with op one of ' ', '-', '+'", () => {
  for (const c of cases) {
    for (const l of lineDiff(c.old, c.new)) {
      assert.deepEqual(Object.keys(l).sort(), ["op", "text"], "a diff line has exactly op and text");
      assert.ok(l.op === " " || l.op === "-" || l.op === "+", `op is ' ', '-' or '+' (${c.promise})`);
    }
  }
});

// the LCS is limited to 250,000 cells (old lines × new lines of the changed middle); above that the
// middle is listed as all removed, then all added
const numbered = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test("lineDiff: a middle of exactly 250,000 cells (500 × 500) still gets the LCS diff", () => {
  const a = [...numbered("o", 250), "common", ...numbered("o", 500).slice(250, 499)];
  const b = [...numbered("n", 250), "common", ...numbered("n", 500).slice(250, 499)];
  assert.equal(a.length * b.length, 250_000);
  const want: DiffLine[] = [
    ...a.slice(0, 250).map((t) => ({ op: "-" as const, text: t })),
    ...b.slice(0, 250).map((t) => ({ op: "+" as const, text: t })),
    { op: " ", text: "common" },
    ...a.slice(251).map((t) => ({ op: "-" as const, text: t })),
    ...b.slice(251).map((t) => ({ op: "+" as const, text: t })),
  ];
  assert.deepEqual(lineDiff(a.join("\n"), b.join("\n")), want, "at the 250,000-cell limit the common line is kept");
});

test("lineDiff: a middle over 250,000 cells (501 × 500) is listed as all old lines removed, then all new lines added", () => {
  const a = [...numbered("o", 250), "common", ...numbered("o", 501).slice(250, 500)];
  const b = [...numbered("n", 250), "common", ...numbered("n", 500).slice(250, 499)];
  assert.equal(a.length * b.length, 250_500);
  const want: DiffLine[] = [...a.map((t) => ({ op: "-" as const, text: t })), ...b.map((t) => ({ op: "+" as const, text: t }))];
  assert.deepEqual(lineDiff(a.join("\n"), b.join("\n")), want, "above the limit: no LCS, all removed then all added (the common line too)");
});

test("lineDiff: the cell limit counts the changed middle only, not the whole file", () => {
  const a = numbered("L", 1000);
  const b = [...a];
  b[500] = "X";
  b[502] = "Y";
  assert.deepEqual(
    lineDiff(a.join("\n"), b.join("\n")),
    lines(" L498", " L499", "-L500", "+X", " L501", "-L502", "+Y", " L503", " L504"),
    "a large file with a small change still gets the LCS diff of its middle",
  );
});

// Properties over many small texts, against a plain reference: the diff is a faithful and minimal
// account of the change, framed by at most two context lines.
function lcsLength(a: string[], b: string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    prev = cur;
  }
  return prev[b.length]!;
}

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("lineDiff: on random texts the diff is faithful, minimal and framed by at most two context lines", () => {
  const rand = rng(42);
  const words = ["a", "b", "c", ""];
  const randomText = () => Array.from({ length: Math.floor(rand() * 8) }, () => words[Math.floor(rand() * words.length)]!).join("\n");
  for (let k = 0; k < 600; k++) {
    const oldText = randomText();
    const newText = rand() < 0.1 ? oldText : randomText();
    const d = lineDiff(oldText, newText);
    const what = `${JSON.stringify(oldText)} -> ${JSON.stringify(newText)}`;
    if (oldText === newText) {
      assert.deepEqual(d, [], `identical texts give no lines: ${what}`);
      continue;
    }
    const a = oldText.split("\n");
    const b = newText.split("\n");
    const x = d.filter((l) => l.op !== "+").map((l) => l.text);
    const y = d.filter((l) => l.op !== "-").map((l) => l.text);
    // a = P + x + S and b = P + y + S for one common prefix P and suffix S
    let faithful = false;
    for (let s = 0; s <= Math.min(a.length, b.length) && !faithful; s++) {
      faithful =
        JSON.stringify(a.slice(0, s)) === JSON.stringify(b.slice(0, s)) &&
        JSON.stringify(a.slice(s, s + x.length)) === JSON.stringify(x) &&
        JSON.stringify(b.slice(s, s + y.length)) === JSON.stringify(y) &&
        JSON.stringify(a.slice(s + x.length)) === JSON.stringify(b.slice(s + y.length));
    }
    assert.ok(faithful, `old lines (' ' and '-') and new lines (' ' and '+') are a common-framed slice of each text: ${what}`);
    const changed = d.filter((l) => l.op !== " ").length;
    assert.equal(changed, a.length + b.length - 2 * lcsLength(a, b), `the number of removed plus added lines is minimal: ${what}`);
    assert.ok(changed > 0, `different texts give at least one changed line: ${what}`);
    let head = 0;
    while (head < a.length && head < b.length && a[head] === b[head]) head++;
    let tail = 0;
    while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
    const lead = d.findIndex((l) => l.op !== " ");
    let trail = 0;
    while (d[d.length - 1 - trail]!.op === " ") trail++;
    assert.equal(lead, Math.min(2, head), `context before the first change: the common leading lines, at most two: ${what}`);
    assert.equal(trail, Math.min(2, tail), `context after the last change: the common trailing lines, at most two: ${what}`);
  }
});
