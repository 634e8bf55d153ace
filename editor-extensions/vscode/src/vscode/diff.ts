// Read-only virtual documents for the "before" and "after" sides of an edit, opened in VS Code's
// diff editor.
import * as vscode from "vscode";
import path from "node:path";

export class DiffContentProvider implements vscode.TextDocumentContentProvider {
  static readonly scheme = "openvaala-diff";
  private readonly contents = new Map<string, string>();
  private counter = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.query) ?? "";
  }

  uriFor(file: string, side: "before" | "after", text: string): vscode.Uri {
    const key = `${++this.counter}-${side}`;
    this.contents.set(key, text);
    return vscode.Uri.from({ scheme: DiffContentProvider.scheme, path: file, query: key });
  }

  async open(file: string, oldText: string, newText: string, title?: string): Promise<void> {
    const left = this.uriFor(file, "before", oldText);
    const right = this.uriFor(file, "after", newText);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${path.basename(file)}: ${title || "OpenVaala edit"}`, { preview: true });
  }
}
