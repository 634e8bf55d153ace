// Read-only virtual documents for the "before" and "after" sides of an edit, opened in VS Code's
// diff editor.
import * as vscode from "vscode";
import path from "node:path";
import { changedLineRanges, lineOffsetIn, type Diff } from "../core/editHighlight.js";

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

  /** `background`: opened without taking the focus (after an edit, while the user may be typing) */
  async open(file: string, oldText: string, newText: string, title?: string, background = false): Promise<void> {
    const left = this.uriFor(file, "before", oldText);
    const right = this.uriFor(file, "after", newText);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${path.basename(file)}: ${title || "OpenVaala edit"}`, { preview: true, ...(background ? { preserveFocus: true } : {}) });
  }
}

/**
 * After the agent edits a file: its diff opens (setting `openvaala.openDiffAfterEdit`) and the
 * edited lines are highlighted wherever the file is shown, in the theme's "inserted line" colour,
 * until the user edits the file or the next turn starts.
 */
export class EditHighlighter implements vscode.Disposable {
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  /** fsPath -> highlighted line ranges */
  private readonly byFile = new Map<string, vscode.Range[]>();
  private readonly subs: vscode.Disposable[];

  constructor(private readonly diffs: DiffContentProvider, private readonly readText: (fsPath: string) => Promise<string | undefined>) {
    this.subs = [
      vscode.window.onDidChangeVisibleTextEditors(() => this.apply()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        // the user typing in an edited file ends its highlight (the agent's own write comes before the edit completes)
        if (e.contentChanges.length && e.document.uri.scheme === "file" && this.byFile.delete(e.document.uri.fsPath)) this.apply();
      }),
    ];
  }

  /** an edit completed: open its diff (when set) and highlight the lines it changed */
  async onEdit(d: Diff): Promise<void> {
    if (vscode.workspace.getConfiguration("openvaala").get<boolean>("openDiffAfterEdit") !== false)
      await this.diffs.open(d.path, d.oldText ?? "", d.newText, "edited by OpenVaala", true);
    const now = await this.readText(d.path);
    const offset = now === undefined ? undefined : lineOffsetIn(now, d.newText);
    if (offset === undefined) return;
    this.byFile.set(d.path, changedLineRanges(d.oldText ?? "", d.newText).map((r) => new vscode.Range(r.start + offset, 0, r.end + offset, 0)));
    this.apply();
  }

  /** the highlighted lines of a file (tests, e2e) */
  ranges(fsPath: string): readonly vscode.Range[] {
    return this.byFile.get(fsPath) ?? [];
  }

  clear(): void {
    if (!this.byFile.size) return;
    this.byFile.clear();
    this.apply();
  }

  private apply(): void {
    for (const e of vscode.window.visibleTextEditors) if (e.document.uri.scheme === "file") e.setDecorations(this.decoration, this.byFile.get(e.document.uri.fsPath) ?? []);
  }

  dispose(): void {
    for (const s of this.subs) s.dispose();
    this.decoration.dispose();
  }
}
