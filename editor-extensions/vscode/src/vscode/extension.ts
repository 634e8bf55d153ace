// Extension entry point: the chat view, one FolderAgent per workspace folder (on demand), palette
// commands, and cleanup when folders go away or the window closes.
import * as vscode from "vscode";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { FolderAgent } from "./folderAgent.js";
import { ChatPanel, ChatViewProvider, type ChatViewDeps } from "./chatView.js";
import { DiffContentProvider, EditHighlighter } from "./diff.js";
import { readTextFile } from "./fsHost.js";
import { configCheck } from "./configCheckCommand.js";
import { configRoot, serverBinary, serverEnv, SERVER_TOKEN_SECRET } from "./serverSettings.js";
import { parsePersistedChat, worthRestoring } from "../core/chatPersist.js";
import { createOutputChannel } from "./outputChannel.js";

export { configRoot };

export const COMMANDS = {
  newChat: "openvaala.newChat",
  newChatInTab: "openvaala.newChatInTab",
  stop: "openvaala.stop",
  showLog: "openvaala.showLog",
  showTraffic: "openvaala.showTraffic",
  openConfigFolder: "openvaala.openConfigFolder",
  configCheck: "openvaala.configCheck",
  restart: "openvaala.restartServer",
  setServerToken: "openvaala.setServerToken",
} as const;

/**
 * Keeps the bearer token for `openvaala.server.url` in VS Code's secret storage (an empty answer
 * removes it). `openvaala.server.tokenFile`, when set, is used instead.
 */
async function setServerToken(secrets: vscode.SecretStorage): Promise<void> {
  const token = await vscode.window.showInputBox({
    title: "OpenVaala: server token",
    prompt: "The bearer token of the server at openvaala.server.url (the text of its --token-file). Empty removes the stored token.",
    password: true,
    ignoreFocusOut: true,
  });
  if (token === undefined) return;
  if (token.trim()) await secrets.store(SERVER_TOKEN_SECRET, token.trim());
  else await secrets.delete(SERVER_TOKEN_SECRET);
  void vscode.window.showInformationMessage(token.trim() ? "OpenVaala: server token stored; it is used at the next connection (OpenVaala: Restart Server)." : "OpenVaala: server token removed.");
}

/**
 * Opens config.yaml of the config root (a new, unsaved one when there is none yet) and, in a local
 * window, reveals the folder in the OS file manager (remote and browser windows have no such thing).
 */
async function openConfigFolder(root: string): Promise<void> {
  await vscode.workspace.fs.createDirectory(vscode.Uri.file(root));
  const cfg = vscode.Uri.file(path.join(root, "config.yaml"));
  if (!vscode.env.remoteName) {
    try {
      await vscode.commands.executeCommand("revealFileInOS", cfg);
    } catch {
      /* a browser window (code-server, vscode.dev) has no revealFileInOS: opening the file is enough */
    }
  }
  let exists = true;
  try {
    await vscode.workspace.fs.stat(cfg);
  } catch {
    exists = false;
  }
  if (exists) await vscode.window.showTextDocument(cfg);
  else if (vscode.env.remoteName) await vscode.window.showTextDocument(cfg.with({ scheme: "untitled" }));
}

export interface ExtensionApi {
  agents: Map<string, FolderAgent>;
  chat: ChatViewProvider;
  /** the chats open in editor tabs */
  panels: Set<ChatPanel>;
  highlights: EditHighlighter;
  agentFor(folder: vscode.WorkspaceFolder): FolderAgent;
  dispose(): Promise<void>;
}

let api: ExtensionApi | undefined;

export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const log = createOutputChannel("OpenVaala Server");
  const traffic = createOutputChannel("OpenVaala ACP Traffic");
  const diagnostics = vscode.languages.createDiagnosticCollection("openvaala");
  const mcpProvider = new acp.McpOverAcpProvider();
  const diffs = new DiffContentProvider();
  const agents = new Map<string, FolderAgent>();
  const version = (context.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0.1.0";

  const highlights = new EditHighlighter(diffs, async (p) => {
    try {
      return (await readTextFile({ sessionId: "", path: p })).content;
    } catch {
      return undefined;
    }
  });
  const panels = new Set<ChatPanel>();
  let chat: ChatViewProvider;
  const agentFor = (folder: vscode.WorkspaceFolder): FolderAgent => {
    const key = folder.uri.toString();
    let a = agents.get(key);
    if (!a) {
      a = new FolderAgent(folder, {
        extensionPath: context.extensionUri.fsPath,
        globalStoragePath: context.globalStorageUri.fsPath,
        secrets: context.secrets,
        log,
        traffic,
        mcpProvider,
        reveal: (c) => ([...panels].find((p) => p.session === c) ?? chat).reveal(),
        onEdit: (d) => void highlights.onEdit(d).catch((e: Error) => log.appendLine(`[openvaala-vscode] showing the edit of ${d.path}: ${e.message}`)),
        onTurnStarted: () => highlights.clear(),
        clientVersion: version,
      });
      agents.set(key, a);
    }
    return a;
  };
  /** a chat in a new editor tab, on `folder`'s server; with `sessionId`, that stored session */
  const openInTab = (folder: vscode.WorkspaceFolder, sessionId?: string): ChatPanel | undefined => {
    // a session is open in one chat only: one that has it already is shown instead
    if (sessionId && showOpenSession(sessionId)) return undefined;
    const panel = vscode.window.createWebviewPanel(ChatPanel.viewType, ChatPanel.DEFAULT_TITLE, vscode.ViewColumn.Active, { retainContextWhenHidden: true });
    const p = adoptPanel(panel, folder);
    if (sessionId) void p.session.loadSession(sessionId).catch((e: Error) => p.session.emit({ type: "notice", severity: "error", text: `Could not open the session: ${e.message}` }));
    p.focusInput();
    return p;
  };
  /** a chat in `panel` (new, or restored by VS Code after a window reload) */
  const adoptPanel = (panel: vscode.WebviewPanel, folder: vscode.WorkspaceFolder): ChatPanel => {
    panel.iconPath = vscode.Uri.joinPath(context.extensionUri, "media", "icon.svg");
    const p = new ChatPanel(viewDeps, agentFor(folder), panel, (closed) => panels.delete(closed));
    panels.add(p);
    return p;
  };
  /** after a window reload VS Code brings the chat tabs back with their saved state (core/chatPersist.ts) */
  const panelSerializer: vscode.WebviewPanelSerializer = {
    async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown) {
      const p = parsePersistedChat(state);
      const folder = (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.toString() === p?.folder) ?? chat.currentFolder();
      if (!folder) return void panel.dispose();
      const restored = adoptPanel(panel, folder);
      if (worthRestoring(p)) void restored.session.restore(p);
    },
  };
  const showOpenSession = (sessionId: string): boolean => {
    const open = [...panels].find((p) => p.session.state.sessionId === sessionId) ?? (chat.chat()?.state.sessionId === sessionId ? chat : undefined);
    open?.reveal();
    return !!open;
  };
  const viewDeps: ChatViewDeps = { extensionUri: context.extensionUri, agentFor, diffs, log, openInTab: (f, s) => void openInTab(f, s), showOpenSession };
  chat = new ChatViewProvider(viewDeps);

  const current = (): FolderAgent | undefined => chat.currentAgent();
  const env = process.env;

  context.subscriptions.push(
    log,
    traffic,
    diagnostics,
    chat,
    highlights,
    vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, chat, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.window.registerWebviewPanelSerializer(ChatPanel.viewType, panelSerializer),
    vscode.workspace.registerTextDocumentContentProvider(DiffContentProvider.scheme, diffs),
    vscode.commands.registerCommand(COMMANDS.newChat, async () => {
      chat.reveal();
      const a = current();
      if (!a) return void vscode.window.showWarningMessage("Open a folder to chat with OpenVaala.");
      try {
        await a.newChat();
        chat.focusInput();
      } catch (e) {
        void vscode.window.showErrorMessage(`OpenVaala: ${(e as Error).message}`);
      }
    }),
    vscode.commands.registerCommand(COMMANDS.newChatInTab, (sessionId?: unknown) => {
      const folder = chat.currentFolder();
      if (!folder) return void vscode.window.showWarningMessage("Open a folder to chat with OpenVaala.");
      return openInTab(folder, typeof sessionId === "string" ? sessionId : undefined);
    }),
    vscode.commands.registerCommand(COMMANDS.stop, async () => {
      await current()?.cancel();
    }),
    vscode.commands.registerCommand(COMMANDS.showLog, () => log.show(true)),
    vscode.commands.registerCommand(COMMANDS.showTraffic, () => {
      traffic.show(true);
      if (!vscode.workspace.getConfiguration("openvaala").get<boolean>("traceTraffic"))
        void vscode.window.showInformationMessage('Turn on "openvaala.traceTraffic" and restart the server (OpenVaala: Restart Server) to record the ACP traffic.');
    }),
    vscode.commands.registerCommand(COMMANDS.restart, async () => {
      await current()?.restart();
    }),
    vscode.commands.registerCommand(COMMANDS.setServerToken, () => setServerToken(context.secrets)),
    vscode.commands.registerCommand(COMMANDS.openConfigFolder, () => openConfigFolder(configRoot(serverEnv(env, chat.currentFolder())))),
    vscode.commands.registerCommand(COMMANDS.configCheck, async () => {
      const folder = chat.currentFolder();
      const cwd = folder?.uri.fsPath ?? os.homedir();
      const serverEnvironment = serverEnv(env, folder);
      let binary: string;
      try {
        binary = serverBinary(context.extensionUri.fsPath, folder, serverEnvironment);
      } catch (e) {
        return void vscode.window.showErrorMessage((e as Error).message);
      }
      const r = await configCheck(binary, cwd, serverEnvironment, diagnostics);
      log.appendLine(`[openvaala-vscode] config check in ${cwd}: exit ${r.code}\n${r.output}`);
      if (r.problems.length) {
        void vscode.window.showWarningMessage(`OpenVaala config check: ${r.problems.length} problem(s).`, "Show Problems").then((c) => {
          if (c) void vscode.commands.executeCommand("workbench.actions.view.problems");
        });
      } else if (r.code === 0) void vscode.window.showInformationMessage("OpenVaala config check: no problems.");
      else void vscode.window.showErrorMessage(`OpenVaala config check failed (exit ${r.code}); see the server log.`);
    }),
    vscode.workspace.onDidChangeWorkspaceFolders((e) => {
      for (const f of e.removed) {
        const key = f.uri.toString();
        agents.get(key)?.dispose();
        agents.delete(key);
      }
      chat.refresh();
    }),
    vscode.window.onDidChangeActiveTextEditor(() => chat.refresh()),
  );

  api = {
    agents,
    chat,
    panels,
    highlights,
    agentFor,
    async dispose() {
      await Promise.allSettled([...agents.values()].map(async (a) => {
        await a.stop();
        a.dispose();
      }));
      agents.clear();
    },
  };
  context.subscriptions.push({ dispose: () => void api?.dispose() });
  return api;
}

export async function deactivate(): Promise<void> {
  await api?.dispose();
  api = undefined;
}
