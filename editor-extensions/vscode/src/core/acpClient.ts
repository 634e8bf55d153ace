// The ACP client side of one `openvaala acp` process, on top of @agentclientprotocol/sdk 2.x
// (`client().onRequest(...).connect(ndJsonStream(...))`). Everything editor-specific (fs, terminal,
// permission, session updates) goes through the `ClientHost` interface, so this module does not
// import `vscode` and is tested with node's test runner against the real binary.
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { lineTap, type TrafficDirection } from "./traffic.js";
import { TerminalManager } from "./terminals.js";
import type { LegacyMcpRouter } from "./mcpRelay.js";

const passThrough = (p: unknown) => (p ?? {}) as Record<string, unknown>;

export type { acp };

export interface ClientHost {
  /** every `session/update` notification, in arrival order */
  onSessionUpdate(n: acp.SessionNotification): void;
  requestPermission(p: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  readTextFile(p: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(p: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
  /** the agent's stderr, as it comes */
  onStderr?(text: string): void;
  /** the process is gone; `expected` when we stopped it */
  onExit?(info: AgentExit): void;
  /** a request we do not implement (logged) */
  onUnknownRequest?(method: string, params: unknown): void;
  /** every JSON-RPC line sent to and received from the agent (redacted); absent: no tap */
  onTraffic?(direction: TrafficDirection, line: string): void;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  expected: boolean;
  stderrTail: string;
}

export interface StartOptions {
  command: string;
  args?: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  host: ClientHost;
  terminals?: TerminalManager;
  /** shared MCP-over-ACP provider; `mcp/message` requests are routed to it */
  mcpProvider?: acp.McpOverAcpProvider;
  /** serves the older `mcp/connect` / `mcp/message {connectionId}` / `mcp/disconnect` form */
  legacyMcp?: () => LegacyMcpRouter | undefined;
  clientInfo?: { name: string; version: string; title?: string };
  clientCapabilities?: acp.ClientCapabilities;
}

export const DEFAULT_CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  // the chat shows notices and compactions as their own items (chatState)
  session: { notices: {}, compaction: {} },
};

/** A text prompt, or blocks. */
export type PromptInput = string | acp.ContentBlock[];

/** Tail buffer for stderr (for exit notices). */
class Tail {
  private s = "";
  constructor(private readonly max = 8192) {}
  push(t: string) {
    this.s = (this.s + t).slice(-this.max);
  }
  get text() {
    return this.s;
  }
}

export class AgentConnection {
  readonly child: ChildProcess;
  readonly connection: acp.ClientConnection;
  readonly terminals: TerminalManager;
  initializeResponse: acp.InitializeResponse | undefined;
  private stopping = false;
  private readonly stderr = new Tail();
  readonly exited: Promise<AgentExit>;

  private constructor(opts: StartOptions, child: ChildProcess, exited: Promise<AgentExit>) {
    this.child = child;
    this.exited = exited;
    this.terminals = opts.terminals ?? new TerminalManager(opts.cwd);
    const host = opts.host;
    const terminals = this.terminals;
    let app = acp
      .client({ name: "openvaala-vscode" })
      .onNotification(acp.methods.client.session.update, ({ params }) => host.onSessionUpdate(params))
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => host.requestPermission(params, signal))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => host.readTextFile(params))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => host.writeTextFile(params))
      .onRequest(acp.methods.client.terminal.create, ({ params }) => terminals.create(params))
      .onRequest(acp.methods.client.terminal.output, ({ params }) => terminals.output(params))
      .onRequest(acp.methods.client.terminal.waitForExit, ({ params, signal }) => terminals.waitForExit(params, signal))
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => terminals.kill(params))
      .onRequest(acp.methods.client.terminal.release, ({ params }) => terminals.release(params));
    const provider = opts.mcpProvider;
    const legacy = opts.legacyMcp ?? (() => undefined);
    if (provider) {
      // one handler for both shapes: `{serverId, requestId}` (current) and `{connectionId}` (legacy)
      app = app.onRequest("mcp/message", passThrough, async ({ params, signal, agent }) => {
        if (typeof params.connectionId === "string") {
          const r = legacy();
          if (!r) throw new acp.RequestError(acp.McpBindingErrorCode.serverUnavailable, "no MCP servers on this connection");
          return r.message(params, signal);
        }
        return provider.handleRequest({ params: params as unknown as acp.McpMessageParams, signal, agent });
      });
      app = app.onRequest("mcp/connect", passThrough, ({ params }) => {
        const r = legacy();
        if (!r) throw new acp.RequestError(acp.McpBindingErrorCode.serverUnavailable, "no MCP servers on this connection");
        return r.connect(params);
      });
      app = app.onRequest("mcp/disconnect", passThrough, ({ params }) => legacy()?.disconnect(params) ?? {});
    }
    app = app.onRequest("*", ({ method, params }) => {
      host.onUnknownRequest?.(method, params);
      throw acp.RequestError.methodNotFound(method);
    });
    let toAgent = Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>;
    let fromAgent = Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>;
    const onTraffic = host.onTraffic?.bind(host);
    if (onTraffic) {
      const sent = lineTap("send", onTraffic);
      void sent.readable.pipeTo(toAgent).catch(() => {});
      toAgent = sent.writable;
      fromAgent = fromAgent.pipeThrough(lineTap("recv", onTraffic));
    }
    const stream = acp.ndJsonStream(toAgent, fromAgent);
    this.connection = app.connect(stream);
  }

  /** Spawns `command args` (default `acp`) in `cwd` and connects. Rejects if the process cannot start. */
  static async start(opts: StartOptions): Promise<AgentConnection> {
    const child = spawn(opts.command, opts.args ?? ["acp"], {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      // own process group: on stop we kill the group, so nothing the agent started outlives us
      detached: process.platform !== "win32",
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (e) => reject(e));
    });
    let self: AgentConnection | undefined;
    const exited = new Promise<AgentExit>((resolve) => {
      child.once("exit", (code, signal) => {
        const info: AgentExit = { code, signal, expected: self?.stopping ?? false, stderrTail: self?.stderr.text ?? "" };
        try {
          self?.connection.close();
        } catch {
          /* ignore */
        }
        self?.terminals.disposeAll();
        opts.host.onExit?.(info);
        resolve(info);
      });
    });
    child.stdin!.on("error", () => {}); // EPIPE after exit: reported through `exited`
    self = new AgentConnection(opts, child, exited);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      self!.stderr.push(d);
      opts.host.onStderr?.(d);
    });
    (self as { clientInfo?: unknown }).clientInfo = opts.clientInfo;
    self.pendingInit = {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: opts.clientCapabilities ?? DEFAULT_CLIENT_CAPABILITIES,
      clientInfo: opts.clientInfo ?? { name: "openvaala-vscode", version: "0.0.0" },
    };
    return self;
  }

  private pendingInit: acp.InitializeRequest | undefined;

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  get capabilities(): acp.AgentCapabilities {
    return this.initializeResponse?.agentCapabilities ?? {};
  }

  /** `mcpCapabilities.acp`: the agent accepts `{type:"acp"}` MCP servers */
  get acceptsAcpMcp(): boolean {
    return !!(this.capabilities.mcpCapabilities as { acp?: boolean } | undefined)?.acp;
  }

  get supportsSessionList(): boolean {
    return !!this.capabilities.sessionCapabilities?.list;
  }

  get supportsLoad(): boolean {
    return !!this.capabilities.loadSession;
  }

  /** `sessionCapabilities.close`: sessions a client leaves can be closed (a closed one can be loaded again) */
  get supportsClose(): boolean {
    return !!(this.capabilities.sessionCapabilities as { close?: unknown } | undefined)?.close;
  }

  closeSession(sessionId: string): Promise<unknown> {
    return this.agent.request(acp.methods.agent.session.close, { sessionId } as never);
  }

  async initialize(): Promise<acp.InitializeResponse> {
    this.initializeResponse = await this.agent.request(acp.methods.agent.initialize, this.pendingInit!);
    return this.initializeResponse;
  }

  newSession(cwd: string, mcpServers: acp.McpServer[] = []): Promise<acp.NewSessionResponse> {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
  }

  loadSession(sessionId: string, cwd: string, mcpServers: acp.McpServer[] = []): Promise<acp.LoadSessionResponse> {
    return this.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers });
  }

  listSessions(cwd?: string, cursor?: string): Promise<acp.ListSessionsResponse> {
    const p: acp.ListSessionsRequest = {};
    if (cwd) p.cwd = cwd;
    if (cursor) p.cursor = cursor;
    return this.agent.request(acp.methods.agent.session.list, p);
  }

  prompt(sessionId: string, input: PromptInput): Promise<acp.PromptResponse> {
    const prompt: acp.ContentBlock[] = typeof input === "string" ? [{ type: "text", text: input }] : input;
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  setMode(sessionId: string, modeId: string): Promise<acp.SetSessionModeResponse> {
    return this.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId });
  }

  setConfigOption(sessionId: string, configId: string, value: string | boolean): Promise<acp.SetSessionConfigOptionResponse> {
    const params = (typeof value === "boolean"
      ? { sessionId, configId, type: "boolean", value }
      : { sessionId, configId, value }) as acp.SetSessionConfigOptionRequest;
    return this.agent.request(acp.methods.agent.session.setConfigOption, params);
  }

  authenticate(methodId: string): Promise<acp.AuthenticateResponse> {
    return this.agent.request(acp.methods.agent.authenticate, { methodId });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends stdin, waits up to `grace` ms, then kills the process group. */
  async stop(grace = 1500): Promise<AgentExit> {
    this.stopping = true;
    this.terminals.disposeAll();
    try {
      this.connection.close();
    } catch {
      /* ignore */
    }
    try {
      this.child.stdin?.end();
    } catch {
      /* ignore */
    }
    const timer = new Promise<null>((r) => setTimeout(() => r(null), grace).unref());
    const r = await Promise.race([this.exited, timer]);
    this.killGroup();
    return r ?? (await this.exited);
  }

  killGroup(signal: NodeJS.Signals = "SIGKILL"): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      if (process.platform === "win32") this.child.kill();
      else process.kill(-pid, signal);
    } catch {
      /* gone */
    }
  }
}
