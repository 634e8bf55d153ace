// `openvaala config check` output -> the problems the user sees in the Problems panel, and the
// fs/read_text_file line window.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseConfigCheck, parseTextLine, sliceLines } from "../src/core/configCheck.js";
import { toDiagnostics } from "../src/vscode/configCheckCommand.js";
import * as vscode from "vscode";

test("JSON report: errors, problems and diagnostics are errors, warnings are warnings; field aliases are read", () => {
  const report = {
    ok: false,
    errors: [{ path: "/c/config.yaml", line: 3, column: 5, message: "bad" }],
    problems: [{ file: "/c/a.yaml", line: "7", col: 2, msg: "via aliases" }],
    diagnostics: [{ source: "/c/b.yaml", text: "third alias", severity: "Warning" }],
    warnings: [{ path: "/c/w.yaml", message: "heads up" }, { path: "/c/x.yaml", message: "note this", severity: "note" }],
  };
  const r = parseConfigCheck(JSON.stringify(report));
  assert.deepEqual(r.report, report, "the parsed report is kept");
  assert.deepEqual(r.problems, [
    { file: "/c/config.yaml", line: 3, column: 5, message: "bad", severity: "error" },
    { file: "/c/a.yaml", line: 7, column: 2, message: "via aliases", severity: "error" },
    { file: "/c/b.yaml", line: 0, column: 0, message: "third alias", severity: "warning" },
    { file: "/c/w.yaml", line: 0, column: 0, message: "heads up", severity: "warning" },
    { file: "/c/x.yaml", line: 0, column: 0, message: "note this", severity: "info" },
  ], "each list gives its severity unless an entry has its own");
});

test("JSON report: severities by name; entries without a message, or not objects, are skipped; strings are parsed as text lines", () => {
  const sev = (severity: unknown) => parseConfigCheck(JSON.stringify({ errors: [{ message: "m", severity }] })).problems[0]!.severity;
  assert.equal(sev("warn"), "warning");
  assert.equal(sev("WARNING"), "warning");
  for (const s of ["info", "information", "note", "hint", "INFO"]) assert.equal(sev(s), "info", `${s} is info`);
  for (const s of ["error", "fatal", "", null]) assert.equal(sev(s), "error", `${String(s)} is an error`);
  const r = parseConfigCheck(JSON.stringify({ errors: [{ line: 1 }, 42, null, "/c/a.yaml:4:2: warning: from a string", "free text"], warnings: "not a list" }));
  assert.deepEqual(r.problems, [
    { file: "/c/a.yaml", line: 4, column: 2, message: "from a string", severity: "warning" },
    { file: "", line: 0, column: 0, message: "free text", severity: "error" },
  ], "string entries are text lines or bare messages; the rest is skipped");
  const bad = parseConfigCheck(JSON.stringify({ errors: [{ message: "x", line: "abc", column: "?" }] })).problems[0]!;
  assert.deepEqual([bad.line, bad.column], [0, 0], "unreadable positions are 0 (unknown)");
  assert.deepEqual(parseConfigCheck(JSON.stringify({ warnings: ["just words"] })).problems[0]!.severity, "warning", "a bare string under warnings is a warning");
});

test("text output: path:line[:col]: [severity: ]message lines from stdout and stderr; broken JSON falls back to text", () => {
  const r = parseConfigCheck("/c/config.yaml:3: unknown key\nnoise\r\n/c/b.yaml:10:4: warning: deprecated\n", "/c/e.yaml:1: info: fyi\n");
  assert.deepEqual(r.problems, [
    { file: "/c/config.yaml", line: 3, column: 0, message: "unknown key", severity: "error" },
    { file: "/c/b.yaml", line: 10, column: 4, message: "deprecated", severity: "warning" },
    { file: "/c/e.yaml", line: 1, column: 0, message: "fyi", severity: "info" },
  ], "each problem line becomes a problem; other lines are ignored");
  assert.equal(r.report, undefined, "no report for text output");
  const broken = parseConfigCheck("{ not json\n/c/a.yaml:2: still found");
  assert.deepEqual(broken.problems.map((p) => p.message), ["still found"], "output that only looks like JSON is read as text");
  assert.equal(parseTextLine("/c/a.yaml:2:x"), undefined, "a line needs ': ' after the position");
  assert.deepEqual(parseTextLine("  C:\\w\\a.yaml:2: x  "), { file: "C:\\w\\a.yaml", line: 2, column: 0, message: "x", severity: "error" }, "lines are trimmed; a drive letter is part of the path");
  assert.equal(parseTextLine("a.yaml: no line"), undefined);
});

test("problems become diagnostics: absolute or folder-relative file, 1-based positions, severity", () => {
  const d = toDiagnostics(
    [
      { file: "/abs/a.yaml", line: 3, column: 5, message: "m1", severity: "error" },
      { file: "rel.yaml", line: 0, column: 0, message: "m2", severity: "warning" },
      { file: "C:\\x\\c.yaml", line: 1, column: 0, message: "m3", severity: "info" },
      { file: "", line: 2, column: 0, message: "m4", severity: "error" },
      { file: "/abs/a.yaml", line: 1, column: 0, message: "m5", severity: "error" },
    ],
    "/folder",
  );
  assert.deepEqual([...d.keys()], ["/abs/a.yaml", "/folder/rel.yaml", "C:\\x\\c.yaml", "/folder"], "absolute paths stay, relative ones are in the folder, no file means the folder");
  const [a1, a2] = d.get("/abs/a.yaml")!;
  assert.deepEqual([a1!.range.start.line, a1!.range.start.character, a1!.range.end.line, a1!.range.end.character], [2, 4, 2, 5], "line and column are 1-based; a column marks one character");
  assert.equal(a2!.range.end.character, Number.MAX_SAFE_INTEGER, "without a column the whole line is marked");
  assert.equal(d.get("/folder/rel.yaml")![0]!.range.start.line, 0, "an unknown line marks the first line");
  assert.deepEqual([a1!.severity, d.get("/folder/rel.yaml")![0]!.severity, d.get("C:\\x\\c.yaml")![0]!.severity], [vscode.DiagnosticSeverity.Error, vscode.DiagnosticSeverity.Warning, vscode.DiagnosticSeverity.Information], "severities map to VS Code's");
  assert.equal(a1!.source, "openvaala", "diagnostics are labelled openvaala");
  assert.equal(a1!.message, "m1");
});

test("fs/read_text_file window: `line` is 1-based, `limit` counts lines", () => {
  const t = "1\n2\n3\n4";
  assert.equal(sliceLines(t), t, "no line or limit: the whole text");
  assert.equal(sliceLines(t, null, null), t);
  assert.equal(sliceLines(t, 2), "2\n3\n4", "from line 2 to the end");
  assert.equal(sliceLines(t, 2, 2), "2\n3", "two lines from line 2");
  assert.equal(sliceLines(t, undefined, 1), "1", "a limit alone starts at line 1");
  assert.equal(sliceLines(t, 1, 0), "", "a limit of 0 is nothing");
  assert.equal(sliceLines(t, 0, -3), "", "a negative limit is nothing");
  assert.equal(sliceLines(t, -5, 1), "1", "a line before the first is the first");
  assert.equal(sliceLines(t, 9), "", "a line past the end is nothing");
});
