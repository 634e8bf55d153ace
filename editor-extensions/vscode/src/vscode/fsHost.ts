// fs/read_text_file and fs/write_text_file in VS Code: reads see unsaved edits of open documents;
// writes to an open document go through a WorkspaceEdit (so undo works), others through workspace.fs.
import * as vscode from "vscode";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { sliceLines } from "../core/configCheck.js";
import { undoPlan, type FileChange, type UndoOutcome } from "../core/turnChanges.js";

function openDocument(fsPath: string): vscode.TextDocument | undefined {
  const target = vscode.Uri.file(fsPath).toString();
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === target || (d.uri.scheme === "file" && d.uri.fsPath === fsPath));
}

export async function readTextFile(p: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
  const doc = openDocument(p.path);
  let text: string;
  if (doc) text = doc.getText();
  else {
    try {
      const bytes = await vscode.workspace.fs.readFile(vscode.Uri.file(p.path));
      text = new TextDecoder("utf-8").decode(bytes);
    } catch (e) {
      const err = new Error(`cannot read ${p.path}: ${(e as Error).message}`) as Error & { code: number };
      err.code = -32002;
      throw err;
    }
  }
  return { content: sliceLines(text, p.line, p.limit) };
}

export async function writeTextFile(p: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
  const uri = vscode.Uri.file(p.path);
  const doc = openDocument(p.path);
  if (doc) {
    const edit = new vscode.WorkspaceEdit();
    const end = doc.lineAt(doc.lineCount - 1).range.end;
    edit.replace(doc.uri, new vscode.Range(new vscode.Position(0, 0), end), p.content);
    const ok = await vscode.workspace.applyEdit(edit);
    if (!ok) throw new Error(`VS Code refused the edit to ${p.path}`);
    // keep disk and buffer in step, as the agent expects the file to be written
    await doc.save();
    return {};
  }
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(p.content));
  return {};
}

/** the file's text as the user sees it (an open document's buffer), undefined when it does not exist */
async function currentText(fsPath: string): Promise<string | undefined> {
  try {
    return (await readTextFile({ sessionId: "", path: fsPath })).content;
  } catch {
    return undefined;
  }
}

/** restores one file of a turn's changes (see undoPlan) */
export async function undoFile(f: FileChange): Promise<UndoOutcome> {
  const plan = undoPlan(f, await currentText(f.path));
  try {
    if (plan === "changed-since") return { path: f.path, result: "changed-since" };
    if (plan === "delete") {
      await vscode.workspace.fs.delete(vscode.Uri.file(f.path));
      return { path: f.path, result: "deleted" };
    }
    await writeTextFile({ sessionId: "", path: f.path, content: f.before ?? "" });
    return { path: f.path, result: "restored" };
  } catch (e) {
    return { path: f.path, result: "failed", message: (e as Error).message };
  }
}
