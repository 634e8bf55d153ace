// One `openvaala acp` per workspace folder (cwd = the folder), started on demand, stopped with the
// folder or the window, restarted with a notice when it dies. Owns the folder's chat state.
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AgentConnection, type AgentExit, type ClientHost } from "../core/acpClient.js";
import { initialChatState, reduce, type ChatEvent, type ChatState } from "../core/chatState.js";
import { McpHub, type LegacyMcpRouter } from "../core/mcpRelay.js";
import { toAcpMcpServer, type McpServerConfig } from "../core/mcpConfig.js";
import { TerminalManager, type ManagedTerminal } from "../core/terminals.js";
import { readTextFile, writeTextFile, undoFile } from "./fsHost.js";
import type { FileChange, UndoOutcome } from "../core/turnChanges.js";
import { collectMcpServers } from "./mcpSources.js";
import { serverArgs, serverBinary, serverEnv } from "./serverSettings.js";

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
  reveal?: () => void;
  clientVersion?: string;
}

const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS = 3;
const EXIT_GRACE_MS = 300;
const SERVER_STOPPED = "The OpenVaala server stopped during the turn.";

export class FolderAgent implements vscode.Disposable {
  private conn: AgentConnection | undefined;
  private starting: Promise<AgentConnection> | undefined;
  private hub: McpHub | undefined;
  private legacy: LegacyMcpRouter | undefined;
  state: ChatState = initialChatState();
  readonly terminals: TerminalManager;
  private readonly ptys = new Map<string, { write: vscode.EventEmitter<string>; close: vscode.EventEmitter<number | void>; terminal?: vscode.Terminal }>();
  private readonly permissionWaiters = new Map<string, (optionId: string | undefined) => void>();
  private permCounter = 0;
  private crashes: number[] = [];
  private disposed = false;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  sessions: acp.SessionInfo[] = [];
  private mcpServers: acp.McpServer[] = [];

  constructor(readonly folder: vscode.WorkspaceFolder, private readonly deps: FolderAgentDeps) {
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

  private emit(e: ChatEvent) {
    this.state = reduce(this.state, e);
    this.fire();
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
      onSessionUpdate: (n) => {
        if (this.state.sessionId && n.sessionId !== this.state.sessionId) return;
        this.emit({ type: "update", update: n.update });
      },
      requestPermission: (p, signal) => this.askPermission(p, signal),
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

  private askPermission(p: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const requestId = `perm${++this.permCounter}`;
    this.emit({ type: "permissionRequested", requestId, request: p });
    this.deps.reveal?.();
    return new Promise((resolve) => {
      const done = (optionId: string | undefined) => {
        this.permissionWaiters.delete(requestId);
        this.emit({ type: "permissionResolved", requestId, outcome: optionId ?? "cancelled" });
        resolve(optionId ? { outcome: { outcome: "selected", optionId } } : { outcome: { outcome: "cancelled" } });
      };
      this.permissionWaiters.set(requestId, done);
      signal.addEventListener("abort", () => done(undefined), { once: true });
    });
  }

  /** the webview's answer to a permission prompt */
  answerPermission(requestId: string, optionId: string | undefined) {
    this.permissionWaiters.get(requestId)?.(optionId);
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
    const binary = this.binaryPath();
    const args = serverArgs(this.folder);
    this.deps.log.appendLine(`[openvaala-vscode] starting ${binary} ${args.join(" ")} in ${this.folder.uri.fsPath}`);
    const conn = await AgentConnection.start({
      command: binary,
      args,
      cwd: this.folder.uri.fsPath,
      env: this.agentEnv(),
      host: this.host(),
      terminals: this.terminals,
      mcpProvider: this.deps.mcpProvider,
      legacyMcp: () => this.legacy,
      clientInfo: { name: "openvaala-vscode", title: "OpenVaala for VS Code", version: this.deps.clientVersion ?? "0.1.0" },
    });
    this.conn = conn;
    await conn.initialize();
    await this.prepareMcp(conn);
    return conn;
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
    this.deps.log.appendLine(`[openvaala-vscode] server exited (code ${info.code}, signal ${info.signal})${info.expected ? "" : " unexpectedly"}`);
    for (const w of [...this.permissionWaiters.values()]) w(undefined);
    if (this.state.busy) this.emit({ type: "turnEnded", error: SERVER_STOPPED });
    void this.hub?.dispose();
    this.hub = undefined;
    if (info.expected || this.disposed) return;
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
    this.crashes.push(now);
    const lastSession = this.state.sessionId;
    if (this.crashes.length > MAX_RESTARTS) {
      this.emit({ type: "notice", severity: "error", text: `The OpenVaala server keeps crashing; not restarting. See "OpenVaala: Show Server Log".` });
      void vscode.window.showErrorMessage(`OpenVaala server for ${this.folder.name} keeps crashing.`, "Show Log").then((c) => {
        if (c === "Show Log") this.deps.log.show(true);
      });
      return;
    }
    this.emit({ type: "notice", severity: "warning", text: `The OpenVaala server exited (${info.signal ?? `code ${info.code}`}); restarting.` });
    void vscode.window.showWarningMessage(`OpenVaala server for ${this.folder.name} exited (${info.signal ?? `code ${info.code}`}); restarting it.`);
    // the old session lives on only if the new process can load it
    this.state = { ...this.state, sessionId: undefined };
    this.restarting = this.ensureStarted()
      .then(async (conn) => {
        if (lastSession && conn.supportsLoad) await this.loadSession(lastSession, true).catch(() => undefined);
      })
      .catch((e) => this.emit({ type: "notice", severity: "error", text: `Restart failed: ${(e as Error).message}` }))
      .finally(() => {
        this.restarting = undefined;
      });
  }

  private restarting: Promise<void> | undefined;

  /**
   * An empty chat whose revision goes on from the old one: the webview redraws an item only when
   * its revision changes, so a counter that started over would show stale items.
   */
  private clearedChat(): ChatState {
    return reduce(this.state, { type: "reset" });
  }

  /** A new session (the old chat is cleared). */
  async newChat(): Promise<void> {
    const conn = await this.ensureStarted();
    const s = await conn.newSession(this.folder.uri.fsPath, this.mcpServers);
    this.state = reduce(this.clearedChat(), { type: "sessionStarted", sessionId: s.sessionId, modes: s.modes ?? null, configOptions: s.configOptions ?? null });
    this.fire();
  }

  async ensureSession(): Promise<string> {
    await this.restarting;
    if (!this.state.sessionId || !this.conn?.isRunning) await this.newChat();
    return this.state.sessionId!;
  }

  async prompt(text: string): Promise<acp.PromptResponse | undefined> {
    const sessionId = await this.ensureSession();
    this.emit({ type: "userPrompt", text });
    this.emit({ type: "turnStarted" });
    try {
      const r = await this.conn!.prompt(sessionId, text);
      this.emit({ type: "turnEnded", stopReason: r.stopReason });
      return r;
    } catch (e) {
      const serverGone = await this.exitsSoon(this.conn);
      // when the server died, onExit has ended the turn with SERVER_STOPPED already
      if (this.state.busy) this.emit({ type: "turnEnded", error: serverGone ? SERVER_STOPPED : (e as Error).message });
      return undefined;
    }
  }

  /** whether the server process is gone or goes within a moment (a prompt fails before the exit is seen) */
  private async exitsSoon(conn: AgentConnection | undefined): Promise<boolean> {
    if (!conn) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), EXIT_GRACE_MS);
    });
    const exited = conn.exited.then(() => true as const);
    const r = await Promise.race([exited, soon]);
    clearTimeout(timer);
    return r;
  }

  changedFile(itemId: string, path: string): FileChange | undefined {
    const item = this.state.items.find((i) => i.kind === "changes" && i.id === itemId);
    return item?.kind === "changes" ? item.files.find((f) => f.path === path) : undefined;
  }

  /** puts the files a turn changed back as they were before it; a file edited since is left alone */
  async undoTurn(itemId: string): Promise<void> {
    const item = this.state.items.find((i) => i.kind === "changes" && i.id === itemId);
    if (item?.kind !== "changes" || item.undo) return;
    const outcomes: UndoOutcome[] = [];
    for (const f of item.files) outcomes.push(await undoFile(f));
    this.emit({ type: "turnUndone", itemId, outcomes });
  }

  async cancel(): Promise<void> {
    for (const w of [...this.permissionWaiters.values()]) w(undefined);
    if (this.conn && this.state.sessionId) await this.conn.cancel(this.state.sessionId);
  }

  async setMode(modeId: string): Promise<void> {
    if (!this.conn || !this.state.sessionId) return;
    await this.conn.setMode(this.state.sessionId, modeId);
    this.emit({ type: "modeSet", modeId });
  }

  async setConfigOption(configId: string, value: string | boolean): Promise<void> {
    if (!this.conn || !this.state.sessionId) return;
    const r = await this.conn.setConfigOption(this.state.sessionId, configId, value);
    if (r.configOptions) this.emit({ type: "configOptions", configOptions: r.configOptions });
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

  /** Loads a stored session; its history is replayed into a fresh chat (or, after a restart, `keepChat`). */
  async loadSession(sessionId: string, keepChat = false): Promise<void> {
    const conn = await this.ensureStarted();
    if (!keepChat) {
      this.state = reduce(this.clearedChat(), { type: "sessionStarted", sessionId });
      this.fire();
    } else {
      // replayed history would duplicate what is shown: ignore updates until the load returns
      this.state = { ...this.state, sessionId: `loading:${sessionId}` };
    }
    const r = await conn.loadSession(sessionId, this.folder.uri.fsPath, this.mcpServers);
    const title = this.sessions.find((s) => s.sessionId === sessionId)?.title ?? null;
    this.emit({ type: "sessionStarted", sessionId, modes: r.modes ?? null, configOptions: r.configOptions ?? null, title });
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
    this.state = this.clearedChat();
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
