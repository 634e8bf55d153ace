// The chat webview view in the side bar. Renders the state of the current folder's FolderAgent
// and turns the webview's messages into agent calls.
import * as vscode from "vscode";
import type { FromWebview, ToWebview, ViewModel } from "../core/webviewProtocol.js";
import type { FolderAgent } from "./folderAgent.js";
import type { DiffContentProvider } from "./diff.js";

export interface ChatViewDeps {
  extensionUri: vscode.Uri;
  agentFor: (folder: vscode.WorkspaceFolder) => FolderAgent;
  diffs: DiffContentProvider;
  log: vscode.OutputChannel;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewType = "openvaala.chat";
  private view: vscode.WebviewView | undefined;
  private folderUri: string | undefined;
  private sub: vscode.Disposable | undefined;
  private error: string | undefined;

  constructor(private readonly deps: ChatViewDeps) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.deps.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.deps.extensionUri, "dist");
    view.webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((m: FromWebview) => void this.onMessage(m));
    view.onDidDispose(() => {
      this.view = undefined;
    });
    this.attach();
  }

  /** the folder the chat talks to: the chosen one, else the active editor's, else the first */
  currentFolder(): vscode.WorkspaceFolder | undefined {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const chosen = folders.find((f) => f.uri.toString() === this.folderUri);
    if (chosen) return chosen;
    const active = vscode.window.activeTextEditor?.document.uri;
    const byEditor = active ? vscode.workspace.getWorkspaceFolder(active) : undefined;
    const f = byEditor ?? folders[0];
    this.folderUri = f?.uri.toString();
    return f;
  }

  currentAgent(): FolderAgent | undefined {
    const f = this.currentFolder();
    return f ? this.deps.agentFor(f) : undefined;
  }

  selectFolder(uri: string) {
    this.folderUri = uri;
    this.attach();
  }

  private attach() {
    this.sub?.dispose();
    const a = this.currentAgent();
    this.sub = a?.onDidChange(() => this.post());
    this.post();
  }

  /** called when folders change */
  refresh() {
    this.attach();
  }

  reveal() {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
  }

  model(): ViewModel {
    const a = this.currentAgent();
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name }));
    return {
      folders,
      currentFolder: this.folderUri,
      running: !!a?.running,
      supportsSessionList: !!a?.connection?.supportsSessionList,
      sessions: a?.sessions ?? [],
      chat: a?.state ?? { items: [], toolCalls: {}, permissions: {}, plan: [], configOptions: [], commands: [], busy: false, nextId: 1, rev: 0 },
      terminals: a?.terminalViews() ?? [],
      error: this.error,
    };
  }

  private busyContext: boolean | undefined;

  private post() {
    const msg: ToWebview = { type: "state", model: this.model() };
    void this.view?.webview.postMessage(msg);
    // the view's Stop button (package.json menus) shows only while a turn runs
    if (msg.model.chat.busy !== this.busyContext) {
      this.busyContext = msg.model.chat.busy;
      void vscode.commands.executeCommand("setContext", "openvaala.busy", this.busyContext);
    }
  }

  focusInput() {
    void this.view?.webview.postMessage({ type: "focusInput" } satisfies ToWebview);
  }

  /** runs a user action; a failure is shown above the input as "<what failed>: <why>" */
  private async run(failure: string, fn: () => Promise<unknown>): Promise<boolean> {
    let ok = true;
    try {
      this.error = undefined;
      await fn();
    } catch (e) {
      ok = false;
      this.error = `${failure}: ${(e as Error).message}`;
      this.deps.log.appendLine(`[openvaala-vscode] ${this.error}`);
    }
    this.post();
    return ok;
  }

  async onMessage(m: FromWebview): Promise<void> {
    const a = this.currentAgent();
    switch (m.type) {
      case "ready":
        this.post();
        return;
      case "selectFolder":
        this.selectFolder(m.uri);
        return;
      case "showLog":
        this.deps.log.show(true);
        return;
      case "copyText":
        await vscode.env.clipboard.writeText(m.text);
        return;
    }
    if (!a) {
      this.error = "Open a folder to chat with OpenVaala.";
      this.post();
      return;
    }
    switch (m.type) {
      case "send":
        // a message that never reached the server goes back into the input, not lost
        if (!(await this.run("Could not send your message", () => a.prompt(m.text)))) void this.view?.webview.postMessage({ type: "restoreInput", text: m.text } satisfies ToWebview);
        return;
      case "stop":
        await this.run("Could not stop", () => a.cancel());
        return;
      case "newChat":
        await this.run("Could not start a new chat", () => a.newChat());
        return;
      case "permission":
        a.answerPermission(m.requestId, m.optionId);
        return;
      case "setMode":
        await this.run("Could not change the mode", () => a.setMode(m.modeId));
        return;
      case "setConfig":
        await this.run("Could not change the setting", () => a.setConfigOption(m.configId, m.value));
        return;
      case "listSessions":
        await this.run("Could not list the previous sessions", () => a.listSessions());
        return;
      case "loadSession":
        await this.run("Could not open the session", () => a.loadSession(m.sessionId));
        return;
      case "openLocation": {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(m.path));
        const line = Math.max(0, (m.line ?? 1) - 1);
        await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case "openDiff": {
        const tc = a.state.toolCalls[m.toolCallId];
        const c = tc?.content[m.index];
        if (!c || c.type !== "diff") return;
        await this.deps.diffs.open(c.path, c.oldText ?? "", c.newText, tc.title);
        return;
      }
      case "showTerminal":
        a.showTerminal(m.terminalId);
        return;
      case "openChangeDiff": {
        const f = a.changedFile(m.itemId, m.path);
        if (f) await this.deps.diffs.open(f.path, f.before ?? "", f.after, "changes of the turn");
        return;
      }
      case "undoTurn":
        await this.run("Could not undo the turn", () => a.undoTurn(m.itemId));
        return;
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, "dist", "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.deps.extensionUri, "media", "chat.css"));
    return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} https: data:; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet"><title>OpenVaala</title></head>
<body><div id="app"></div><script nonce="${nonce}" src="${script}"></script></body></html>`;
  }

  dispose() {
    this.sub?.dispose();
  }
}
