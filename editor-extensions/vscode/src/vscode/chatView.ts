// The chat webviews: the view in the side bar (the current folder's main chat) and chats in editor
// tabs (each its own session on the folder's server). Both render a ChatSession and turn the
// webview's messages into agent calls.
import * as vscode from "vscode";
import path from "node:path";
import type { FolderView, FromWebview, ToWebview, ViewModel } from "../core/webviewProtocol.js";
import type { Attachment } from "../core/attachments.js";
import { parsePersistedChat, worthRestoring } from "../core/chatPersist.js";
import type { FolderAgent } from "./folderAgent.js";
import type { ChatSession } from "./chatSession.js";
import type { DiffContentProvider } from "./diff.js";

export interface ChatViewDeps {
  extensionUri: vscode.Uri;
  agentFor: (folder: vscode.WorkspaceFolder) => FolderAgent;
  diffs: DiffContentProvider;
  log: vscode.OutputChannel;
  /** opens a stored session in a new editor tab (History) */
  openInTab?: (folder: vscode.WorkspaceFolder, sessionId?: string) => void;
  /** shows the chat (side bar or tab) that has `sessionId` open; false when none has */
  showOpenSession?: (sessionId: string) => boolean;
}

const MAX_PICKED_FILES = 5000;

/** One webview showing one chat. */
abstract class ChatWebview implements vscode.Disposable {
  protected webview: vscode.Webview | undefined;
  private sub: vscode.Disposable | undefined;
  protected error: string | undefined;

  constructor(protected readonly deps: ChatViewDeps) {}

  abstract currentAgent(): FolderAgent | undefined;
  /** the chat this webview shows */
  abstract chat(): ChatSession | undefined;
  protected abstract folders(): { list: FolderView[]; current?: string | undefined };
  protected abstract readonly inTab: boolean;

  protected setup(webview: vscode.Webview) {
    this.webview = webview;
    const media = vscode.Uri.joinPath(this.deps.extensionUri, "media");
    const dist = vscode.Uri.joinPath(this.deps.extensionUri, "dist");
    webview.options = { enableScripts: true, localResourceRoots: [media, dist] };
    webview.html = this.html(webview);
    webview.onDidReceiveMessage((m: FromWebview) => void this.onMessage(m));
  }

  protected attach() {
    this.sub?.dispose();
    this.sub = this.currentAgent()?.onDidChange(() => this.post());
    this.post();
  }

  model(): ViewModel {
    const a = this.currentAgent();
    const c = this.chat();
    const f = this.folders();
    return {
      folders: f.list,
      currentFolder: f.current,
      running: !!a?.running,
      supportsSessionList: !!a?.connection?.supportsSessionList,
      sessions: a?.sessions ?? [],
      chat: c?.state ?? { items: [], toolCalls: {}, permissions: {}, plan: [], configOptions: [], commands: [], busy: false, nextId: 1, rev: 0 },
      terminals: a?.terminalViews() ?? [],
      queue: (c?.queue.list ?? []).map((q) => ({ id: q.id, text: q.text, attachments: q.attachments.map((x) => x.name) })),
      inTab: this.inTab,
      error: this.error,
    };
  }

  protected post(): ViewModel {
    const model = this.model();
    void this.webview?.postMessage({ type: "state", model } satisfies ToWebview);
    this.persist();
    return model;
  }

  /** the folder saved with the chat (the side bar's: which folder's chat it showed) */
  protected persistedFolder(): string | undefined {
    return this.currentAgent()?.folder.uri.toString();
  }

  private lastPersisted: { queue: unknown; key: string } | undefined;
  /** hands the webview what outlives a window reload, when it changed (not on every streamed chunk) */
  private persist() {
    const c = this.chat();
    if (!c || !this.webview) return;
    const state = c.persisted(this.persistedFolder());
    // the queue's list is replaced on every change: compared by identity, images are not re-read
    const now = { queue: c.queue.list, key: `${state.folder ?? ""}\n${state.sessionId ?? ""}` };
    if (this.lastPersisted?.queue === now.queue && this.lastPersisted.key === now.key) return;
    this.lastPersisted = now;
    this.postTo({ type: "persist", state });
  }

  protected postTo(m: ToWebview) {
    void this.webview?.postMessage(m);
  }

  focusInput() {
    this.postTo({ type: "focusInput" });
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

  protected selectFolder(_uri: string) {}

  async onMessage(m: FromWebview): Promise<void> {
    const a = this.currentAgent();
    const c = this.chat();
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
      case "pickFile": {
        const file = await pickWorkspaceFile(a?.folder);
        if (file) this.postTo({ type: "attach", attachment: file });
        else this.focusInput();
        return;
      }
    }
    if (!a || !c) {
      this.error = "Open a folder to chat with OpenVaala.";
      this.post();
      return;
    }
    switch (m.type) {
      case "send": {
        const attachments = m.attachments ?? [];
        // a message that never reached the server goes back into the input, not lost
        if (!(await this.run("Could not send your message", () => c.send(m.text, attachments)))) this.postTo({ type: "restoreInput", text: m.text, attachments });
        return;
      }
      case "unqueue": {
        const q = c.unqueue(m.id);
        if (q && m.edit) this.postTo({ type: "restoreInput", text: q.text, attachments: q.attachments });
        return;
      }
      case "sendQueued": {
        const q = c.state.busy ? undefined : c.unqueue(m.id);
        if (q) await this.run("Could not send your message", () => c.send(q.text, q.attachments));
        return;
      }
      case "stop":
        await this.run("Could not stop", () => c.cancel());
        return;
      case "newChat":
        await this.run("Could not start a new chat", () => c.newChat());
        return;
      case "permission":
        c.answerPermission(m.requestId, m.optionId);
        return;
      case "setMode":
        await this.run("Could not change the mode", () => c.setMode(m.modeId));
        return;
      case "setConfig":
        await this.run("Could not change the setting", () => c.setConfigOption(m.configId, m.value));
        return;
      case "listSessions":
        await this.run("Could not list the previous sessions", () => a.listSessions());
        return;
      case "loadSession":
        // the server holds a session in one chat at a time: one open elsewhere is shown there
        if (m.sessionId !== c.state.sessionId && this.deps.showOpenSession?.(m.sessionId)) return;
        await this.run("Could not open the session", () => c.loadSession(m.sessionId));
        return;
      case "openSessionInTab":
        this.deps.openInTab?.(a.folder, m.sessionId);
        return;
      case "openLocation": {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(m.path));
        const line = Math.max(0, (m.line ?? 1) - 1);
        await vscode.window.showTextDocument(doc, { selection: new vscode.Range(line, 0, line, 0), preview: true });
        return;
      }
      case "openDiff": {
        const tc = c.state.toolCalls[m.toolCallId];
        const d = tc?.content[m.index];
        if (!d || d.type !== "diff") return;
        await this.deps.diffs.open(d.path, d.oldText ?? "", d.newText, tc.title);
        return;
      }
      case "showTerminal":
        a.showTerminal(m.terminalId);
        return;
      case "openChangeDiff": {
        const f = c.changedFile(m.itemId, m.path);
        if (f) await this.deps.diffs.open(f.path, f.before ?? "", f.after, "changes of the turn");
        return;
      }
      case "undoTurn":
        await this.run("Could not undo the turn", () => c.undoTurn(m.itemId));
        return;
      case "editResend": {
        let text: string | undefined;
        const ok = await this.run("Could not take the message back", async () => (text = await c.editAndResend(m.itemId)));
        if (ok && text !== undefined) this.postTo({ type: "restoreInput", text });
        return;
      }
      case "restoreFiles":
        await this.run("Could not restore the files", () => c.restoreFilesTo(m.itemId, confirmRestore));
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

/** a quick pick of the folder's files (as the `@` of the input) */
async function pickWorkspaceFile(folder: vscode.WorkspaceFolder | undefined): Promise<Attachment | undefined> {
  if (!folder) return undefined;
  const uris = await vscode.workspace.findFiles(new vscode.RelativePattern(folder, "**/*"), undefined, MAX_PICKED_FILES);
  const items = uris
    .map((u) => ({ label: path.basename(u.fsPath), description: path.relative(folder.uri.fsPath, path.dirname(u.fsPath)) || undefined, fsPath: u.fsPath }))
    .sort((x, y) => (x.description ?? "").localeCompare(y.description ?? "") || x.label.localeCompare(y.label));
  const picked = await vscode.window.showQuickPick(items, { title: "Attach a file to the message", placeHolder: "Type to search the workspace files", matchOnDescription: true });
  if (!picked) return undefined;
  return { kind: "file", id: `f${Date.now()}-${picked.fsPath}`, path: picked.fsPath, name: path.relative(folder.uri.fsPath, picked.fsPath) };
}

/** The chat view in the side bar: the current folder's main chat. */
export class ChatViewProvider extends ChatWebview implements vscode.WebviewViewProvider {
  static readonly viewType = "openvaala.chat";
  private view: vscode.WebviewView | undefined;
  private folderUri: string | undefined;
  protected readonly inTab = false;

  resolveWebviewView(view: vscode.WebviewView, context?: vscode.WebviewViewResolveContext): void {
    this.view = view;
    this.setup(view.webview);
    view.onDidDispose(() => {
      this.view = undefined;
      this.webview = undefined;
    });
    this.restore(context?.state);
    this.attach();
  }

  private restored = false;
  /** after a window reload: the chat the view showed comes back (its folder's, if that is still open) */
  private restore(state: unknown) {
    if (this.restored) return;
    this.restored = true;
    const p = parsePersistedChat(state);
    if (!worthRestoring(p)) return;
    if (p.folder) {
      if (!(vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.toString() === p.folder)) return;
      this.folderUri = p.folder;
    }
    const main = this.chat();
    if (main && !main.state.sessionId && !main.queue.list.length) void main.restore(p);
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

  chat(): ChatSession | undefined {
    return this.currentAgent()?.main;
  }

  protected folders() {
    return { list: (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name })), current: this.folderUri };
  }

  override selectFolder(uri: string) {
    this.folderUri = uri;
    this.attach();
  }

  /** called when folders change */
  refresh() {
    this.attach();
  }

  reveal() {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
  }

  private busyContext: boolean | undefined;

  protected override post(): ViewModel {
    const model = super.post();
    // the view's Stop button (package.json menus) shows only while a turn runs
    if (model.chat.busy !== this.busyContext) {
      this.busyContext = model.chat.busy;
      void vscode.commands.executeCommand("setContext", "openvaala.busy", this.busyContext);
    }
    return model;
  }
}

/** A chat in an editor tab: its own session on the folder's server, closed with the tab. */
export class ChatPanel extends ChatWebview {
  static readonly viewType = "openvaala.chatTab";
  static readonly DEFAULT_TITLE = "OpenVaala Chat";
  readonly session: ChatSession;
  protected readonly inTab = true;

  constructor(deps: ChatViewDeps, private readonly agent: FolderAgent, readonly panel: vscode.WebviewPanel, onClose: (p: ChatPanel) => void) {
    super(deps);
    this.session = agent.openChat();
    this.setup(panel.webview);
    panel.onDidDispose(() => {
      this.webview = undefined;
      this.dispose();
      agent.closeChat(this.session);
      onClose(this);
    });
    this.attach();
  }

  currentAgent(): FolderAgent {
    return this.agent;
  }

  chat(): ChatSession {
    return this.session;
  }

  protected folders() {
    return { list: [] };
  }

  protected override post(): ViewModel {
    const model = super.post();
    const title = model.chat.title ? `OpenVaala: ${model.chat.title}` : ChatPanel.DEFAULT_TITLE;
    if (this.webview && this.panel.title !== title) this.panel.title = title;
    return model;
  }

  reveal() {
    this.panel.reveal(undefined, true);
  }
}

/** the dry run's list, to confirm before the files are put back (_session/rewind_files) */
export async function confirmRestore(files: { path: string; action: string }[]): Promise<boolean> {
  const detail = files.map((f) => `${f.action}: ${f.path}`).join("\n");
  const answer = await vscode.window.showWarningMessage("Put these files back as they were before this message?", { modal: true, detail }, "Restore");
  return answer === "Restore";
}
