// `OpenVaala: Check Configuration`: runs `openvaala config check --json --cwd <folder>` and shows
// the problems in the Problems panel.
import * as vscode from "vscode";
import { execFile } from "node:child_process";
import { parseConfigCheck, type ConfigProblem } from "../core/configCheck.js";

export function runConfigCheckProcess(binary: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(binary, ["config", "check", "--json", "--cwd", cwd], { cwd, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

export function toDiagnostics(problems: ConfigProblem[], cwd: string): Map<string, vscode.Diagnostic[]> {
  const byFile = new Map<string, vscode.Diagnostic[]>();
  for (const p of problems) {
    const file = p.file ? (p.file.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p.file) ? p.file : `${cwd}/${p.file}`) : `${cwd}`;
    const line = Math.max(0, p.line - 1);
    const col = Math.max(0, p.column - 1);
    const range = new vscode.Range(line, col, line, p.column ? col + 1 : Number.MAX_SAFE_INTEGER);
    const severity =
      p.severity === "warning" ? vscode.DiagnosticSeverity.Warning : p.severity === "info" ? vscode.DiagnosticSeverity.Information : vscode.DiagnosticSeverity.Error;
    const d = new vscode.Diagnostic(range, p.message, severity);
    d.source = "openvaala";
    if (!byFile.has(file)) byFile.set(file, []);
    byFile.get(file)!.push(d);
  }
  return byFile;
}

export async function configCheck(binary: string, cwd: string, env: NodeJS.ProcessEnv, collection: vscode.DiagnosticCollection): Promise<{ code: number; problems: ConfigProblem[]; output: string }> {
  const r = await runConfigCheckProcess(binary, cwd, env);
  const { problems } = parseConfigCheck(r.stdout, r.stderr);
  collection.clear();
  for (const [file, diags] of toDiagnostics(problems, cwd)) collection.set(vscode.Uri.file(file), diags);
  return { code: r.code, problems, output: r.stdout + r.stderr };
}
