// One `openvaala acp` per workspace folder (cwd = the folder), started on demand, stopped with the
// folder or the window, restarted with a notice when it dies. Owns the folder's chat state.
import path from "node:path";
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AgentConnection, type AgentExit, type ClientHost } from "../core/acpClient.js";
import type { ChatState } from "../core/chatState.js";
import { McpHub, type LegacyMcpRouter } from "../core/mcpRelay.js";
import { toAcpMcpServer, type McpServerConfig } from "../core/mcpConfig.js";
import { TerminalManager, type ManagedTerminal } from "../core/terminals.js";
import { readTextFile, writeTextFile } from "./fsHost.js";
import type { FileChange } from "../core/turnChanges.js";
import type { Attachment } from "../core/attachments.js";
import { ChatSession, type ChatSessionHost } from "./chatSession.js";
import { collectMcpServers } from "./mcpSources.js";
import { configRoot, serverArgs, serverBinary, serverEnv, serverToken, serverUrl } from "./serverSettings.js";

export interface TerminalView {
  id: string;
  command: string;
  output: string;
  truncated: boolean;
  exitStatus: acp.TerminalExitStatus | null;
  released?: boolean;
}

export interface FolderAgentDeps {
  extensionPath: string;
  globalStoragePath: string;
  secrets: vscode.SecretStorage;
  log: vscode.OutputChannel;
  /** where the JSON-RPC traffic goes when `openvaala.traceTraffic` is on */
  traffic?: vscode.OutputChannel;
  /** the shared MCP-over-ACP provider */
  mcpProvider: acp.McpOverAcpProvider;
  /** injectable for tests */
  binary?: string;
  env?: NodeJS.ProcessEnv;
  /** show the chat view when the agent asks for permission */
  reveal?: (chat: ChatSession) => void;
  clientVersion?: string;
  /** an edit of a chat completed (opens its diff and highlights it) */
  onEdit?: ChatSessionHost["onEdit"];
  /** a turn of a chat started (clears the highlights of the previous one) */
  onTurnStarted?: () => void;
}

const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS = 3;

export class FolderAgent implements vscode.Disposable {
  private conn: AgentConnection | undefined;
  private starting: Promise<AgentConnection> | undefined;
  private hub: McpHub | undefined;
  private legacy: LegacyMcpRouter | undefined;
  readonly terminals: TerminalManager;
  private readonly ptys = new Map<string, { write: vscode.EventEmitter<string>; close: vscode.EventEmitter<number | void>; terminal?: vscode.Terminal }>();
  private permCounter = 0;
  /** the side bar's chat; chats in editor tabs come and go (openChat, closeChat) */
  readonly main: ChatSession;
  private readonly chats = new Set<ChatSession>();
  private crashes: number[] = [];
  private disposed = false;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  sessions: acp.SessionInfo[] = [];
  private mcpServers: acp.McpServer[] = [];

  constructor(readonly folder: vscode.WorkspaceFolder, private readonly deps: FolderAgentDeps) {
    this.main = this.openChat();
    this.terminals = new TerminalManager(folder.uri.fsPath);
    this.terminals.listeners.add({
      onCreate: (t) => this.mirrorTerminal(t),
      onData: (t, chunk) => {
        this.ptys.get(t.id)?.write.fire(chunk.replace(/\r?\n/g, "\r\n"));
        this.fire();
      },
      onExit: (t, s) => {
        this.ptys.get(t.id)?.write.fire(`\r\n[exited${s.exitCode !== null ? ` with code ${s.exitCode}` : ""}${s.signal ? ` (${s.signal})` : ""}]\r\n`);
        this.fire();
      },
    });
  }

  get connection(): AgentConnection | undefined {
    return this.conn;
  }

  get running(): boolean {
    return !!this.conn?.isRunning;
  }

  /** the side bar chat's state */
  get state(): ChatState {
    return this.main.state;
  }

  set state(s: ChatState) {
    this.main.state = s;
  }

  /** a chat of its own (an editor tab) on this folder's server connection */
  openChat(): ChatSession {
    const agent = this;
    const host: ChatSessionHost = {
      get conn() {
        return agent.conn;
      },
      get restarting() {
        return agent.restarting;
      },
      get mcpServers() {
        return agent.mcpServers;
      },
      get sessions() {
        return agent.sessions;
      },
      ensureStarted: () => this.ensureStarted(),
      fire: () => this.fire(),
      cwd: this.folder.uri.fsPath,
      get configFile() {
        return path.join(configRoot(agent.agentEnv()), "config.yaml");
      },
      onEdit: (d) => this.deps.onEdit?.(d),
      onTurnStarted: () => this.deps.onTurnStarted?.(),
    };
    const c = new ChatSession(host);
    this.chats.add(c);
    return c;
  }

  closeChat(c: ChatSession): void {
    if (c === this.main) return;
    this.chats.delete(c);
    void c.close();
  }

  /** the chat a notification or request of `sessionId` belongs to; updates before any session go to the side bar chat */
  private chatFor(sessionId: string): ChatSession | undefined {
    for (const c of this.chats) if (c.state.sessionId === sessionId) return c;
    return this.main.state.sessionId ? undefined : this.main;
  }

  private fireTimer: ReturnType<typeof setTimeout> | undefined;
  private fire() {
    if (this.fireTimer) return;
    this.fireTimer = setTimeout(() => {
      this.fireTimer = undefined;
      this.changed.fire();
    }, 16);
  }

  terminalViews(): TerminalView[] {
    return this.terminals.shown().map((t) => ({
      id: t.id,
      command: t.commandLine,
      output: t.output.slice(-8192),
      truncated: t.truncated || t.output.length > 8192,
      exitStatus: t.exitStatus,
      ...(t.released ? { released: true } : {}),
    }));
  }

  private mirrorTerminal(t: ManagedTerminal) {
    const write = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<number | void>();
    const pty: vscode.Pseudoterminal = {
      onDidWrite: write.event,
      onDidClose: close.event,
      open: () => write.fire(`$ ${t.commandLine}\r\n${t.output.replace(/\r?\n/g, "\r\n")}`),
      close: () => t.kill(),
    };
    const entry: { write: vscode.EventEmitter<string>; close: vscode.EventEmitter<number | void>; terminal?: vscode.Terminal } = { write, close };
    this.ptys.set(t.id, entry);
    entry.terminal = vscode.window.createTerminal({ name: `OpenVaala: ${t.commandLine.slice(0, 40)}`, pty });
  }

  showTerminal(id: string) {
    this.ptys.get(id)?.terminal?.show(true);
  }

  private host(): ClientHost {
    return {
      onSessionUpdate: (n) => this.chatFor(n.sessionId)?.onUpdate(n.update),
      requestPermission: (p, signal) => {
        const chat = this.chatFor(p.sessionId) ?? this.main;
        this.deps.reveal?.(chat);
        return chat.askPermission(`perm${++this.permCounter}`, p, signal);
      },
      readTextFile: (p) => readTextFile(p),
      writeTextFile: (p) => writeTextFile(p),
      onStderr: (s) => this.deps.log.append(s),
      onExit: (info) => this.onExit(info),
      onUnknownRequest: (m) => this.deps.log.appendLine(`[openvaala-vscode] the agent called ${m}, which this extension does not implement`),
      ...(this.tracing() ? { onTraffic: (d: "send" | "recv", line: string) => this.deps.traffic!.appendLine(`${new Date().toISOString()} ${this.folder.name} ${d === "send" ? "→" : "←"} ${line}`) } : {}),
    };
  }

  private tracing(): boolean {
    return !!this.deps.traffic && vscode.workspace.getConfiguration("openvaala", this.folder.uri).get<boolean>("traceTraffic") === true;
  }

  /** the webview's answer to a permission prompt of the side bar chat */
  answerPermission(requestId: string, optionId: string | undefined) {
    this.main.answerPermission(requestId, optionId);
  }

  binaryPath(): string {
    if (this.deps.binary) return this.deps.binary;
    return serverBinary(this.deps.extensionPath, this.folder, this.agentEnv());
  }

  agentEnv(): NodeJS.ProcessEnv {
    return serverEnv(this.deps.env ?? process.env, this.folder);
  }

  /** Starts the process (once) and initializes it. */
  ensureStarted(): Promise<AgentConnection> {
    // a start under way first: its connection exists before `initialize` is answered, and nothing
    // may be sent on it until then
    if (this.starting) return this.starting;
    if (this.conn?.isRunning) return Promise.resolve(this.conn);
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<AgentConnection> {
    if (this.disposed) throw new Error("folder closed");
    const url = serverUrl(this.folder);
    const conn = url ? await this.connectTo(url) : await this.spawnServer();
    this.conn = conn;
    await conn.initialize();
    await this.prepareMcp(conn);
    return conn;
  }

  /** what both ways of reaching the server share */
  private connectionOptions() {
    return {
      cwd: this.folder.uri.fsPath,
      host: this.host(),
      terminals: this.terminals,
      mcpProvider: this.deps.mcpProvider,
      legacyMcp: () => this.legacy,
      clientInfo: { name: "openvaala-vscode", title: "OpenVaala for VS Code", version: this.deps.clientVersion ?? "0.1.0" },
    };
  }

  private spawnServer(): Promise<AgentConnection> {
    const binary = this.binaryPath();
    const args = serverArgs(this.folder);
    this.deps.log.appendLine(`[openvaala-vscode] starting ${binary} ${args.join(" ")} in ${this.folder.uri.fsPath}`);
    return AgentConnection.start({ ...this.connectionOptions(), command: binary, args, env: this.agentEnv() });
  }

  /** `openvaala.server.url`: a server someone else started (a dev box, a codespace, `ssh -L`) */
  private async connectTo(url: string): Promise<AgentConnection> {
    const token = await serverToken(this.folder, this.deps.secrets);
    this.deps.log.appendLine(`[openvaala-vscode] connecting to ${url}${token ? " with a bearer token" : " without a token"}`);
    return AgentConnection.connect({ ...this.connectionOptions(), url, token });
  }

  /** VS Code's MCP servers: as `acp` servers through the relay when the agent takes them, else as plain entries. */
  private async prepareMcp(conn: AgentConnection) {
    await this.hub?.dispose();
    this.hub = undefined;
    this.legacy = undefined;
    this.mcpServers = [];
    const cfg = vscode.workspace.getConfiguration("openvaala", this.folder.uri);
    if (cfg.get<boolean>("mcp.forwardVsCodeServers") === false) return;
    let configs: McpServerConfig[] = [];
    try {
      const r = await collectMcpServers(this.folder, this.deps.globalStoragePath, this.deps.secrets);
      configs = r.servers;
      for (const p of r.problems) this.deps.log.appendLine(`[openvaala-vscode] MCP config ${p.source}${p.line ? `:${p.line}` : ""}: ${p.message}`);
    } catch (e) {
      this.deps.log.appendLine(`[openvaala-vscode] reading MCP config failed: ${(e as Error).message}`);
    }
    if (!configs.length) return;
    if (conn.acceptsAcpMcp) {
      this.hub = new McpHub(configs, { log: (l) => this.deps.log.appendLine(l), clientInfo: { name: "openvaala-vscode", version: this.deps.clientVersion ?? "0.1.0" } });
      this.legacy = this.hub.legacyRouter();
      this.mcpServers = this.hub.register(this.deps.mcpProvider, conn.agent);
    } else {
      const mc = conn.capabilities.mcpCapabilities ?? {};
      this.mcpServers = configs
        .filter((c) => c.type === "stdio" || (c.type === "http" && mc.http) || (c.type === "sse" && mc.sse))
        .map((c) => toAcpMcpServer(c) as acp.McpServer);
    }
    this.deps.log.appendLine(`[openvaala-vscode] offering ${this.mcpServers.length} MCP server(s) from VS Code: ${configs.map((c) => c.name).join(", ")}`);
  }

  get legacyMcpRouter(): LegacyMcpRouter | undefined {
    return this.legacy;
  }

  private onExit(info: AgentExit) {
    const what = info.reason ?? `server exited (code ${info.code}, signal ${info.signal})`;
    this.deps.log.appendLine(`[openvaala-vscode] ${what}${info.expected ? "" : " unexpectedly"}`);
    for (const c of this.chats) c.serverStopped();
    void this.hub?.dispose();
    this.hub = undefined;
    if (info.expected || this.disposed) return;
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
    this.crashes.push(now);
    const notice = (severity: "warning" | "error", text: string) => {
      for (const c of this.chats) c.emit({ type: "notice", severity, text });
    };
    if (this.crashes.length > MAX_RESTARTS) {
      notice("error", `The OpenVaala server keeps crashing; not restarting. See "OpenVaala: Show Server Log".`);
      void vscode.window.showErrorMessage(`OpenVaala server for ${this.folder.name} keeps crashing.`, "Show Log").then((c) => {
        if (c === "Show Log") this.deps.log.show(true);
      });
      return;
    }
    if (info.reason) {
      // a server reached by URL runs on: reconnect and load the sessions again
      notice("warning", `OpenVaala: ${info.reason}; reconnecting.`);
      void vscode.window.showWarningMessage(`OpenVaala for ${this.folder.name}: ${info.reason}; reconnecting.`);
    } else {
      notice("warning", `The OpenVaala server exited (${info.signal ?? `code ${info.code}`}); restarting.`);
      void vscode.window.showWarningMessage(`OpenVaala server for ${this.folder.name} exited (${info.signal ?? `code ${info.code}`}); restarting it.`);
    }
    // the old sessions live on only if the new process can load them
    const lastSessions = [...this.chats].map((c) => ({ c, sessionId: c.state.sessionId }));
    for (const c of this.chats) c.state = { ...c.state, sessionId: undefined };
    this.restarting = this.ensureStarted()
      .then(async (conn) => {
        if (!conn.supportsLoad) return;
        for (const { c, sessionId } of lastSessions) if (sessionId) await c.loadSession(sessionId, true).catch(() => undefined);
      })
      .catch((e) => notice("error", `Restart failed: ${(e as Error).message}`))
      .finally(() => {
        this.restarting = undefined;
      });
  }

  private restarting: Promise<void> | undefined;

  // the side bar chat's actions (the chat view and tests call them on the agent)
  newChat(): Promise<void> {
    return this.main.newChat();
  }

  ensureSession(): Promise<string> {
    return this.main.ensureSession();
  }

  prompt(text: string, attachments: Attachment[] = []): Promise<acp.PromptResponse | undefined> {
    return this.main.prompt(text, attachments);
  }

  changedFile(itemId: string, path: string): FileChange | undefined {
    return this.main.changedFile(itemId, path);
  }

  undoTurn(itemId: string): Promise<void> {
    return this.main.undoTurn(itemId);
  }

  cancel(): Promise<void> {
    return this.main.cancel();
  }

  setMode(modeId: string): Promise<void> {
    return this.main.setMode(modeId);
  }

  setConfigOption(configId: string, value: string | boolean): Promise<void> {
    return this.main.setConfigOption(configId, value);
  }

  async listSessions(): Promise<acp.SessionInfo[]> {
    const conn = await this.ensureStarted();
    if (!conn.supportsSessionList) {
      this.sessions = [];
      return [];
    }
    const r = await conn.listSessions(this.folder.uri.fsPath);
    this.sessions = r.sessions;
    this.fire();
    return r.sessions;
  }

  loadSession(sessionId: string, keepChat = false): Promise<void> {
    return this.main.loadSession(sessionId, keepChat);
  }

  async stop(): Promise<void> {
    const conn = this.conn;
    this.conn = undefined;
    await conn?.stop();
    await this.hub?.dispose();
    this.hub = undefined;
  }

  async restart(): Promise<void> {
    await this.stop();
    for (const c of this.chats) c.state = c.clearedChat();
    await this.ensureStarted();
    this.fire();
  }

  dispose(): void {
    this.disposed = true;
    void this.stop();
    for (const p of this.ptys.values()) {
      p.close.fire();
      p.terminal?.dispose();
    }
    this.ptys.clear();
    this.changed.dispose();
  }
}
