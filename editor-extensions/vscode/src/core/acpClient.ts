// The ACP client side of one `openvaala acp`, on top of @agentclientprotocol/sdk 2.x
// (`client().onRequest(...).connect(stream)`): a child process on this machine (stdio), or a
// running `openvaala acp --listen` reached by URL (the SDK's Streamable HTTP client transport).
// Everything editor-specific (fs, terminal, permission, session updates) goes through the
// `ClientHost` interface, so this module does not import `vscode` and is tested with node's test
// runner against the real binary.
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { lineTap, messageTap, type TrafficDirection } from "./traffic.js";
import { TerminalManager } from "./terminals.js";
import type { LegacyMcpRouter } from "./mcpRelay.js";

const passThrough = (p: unknown) => (p ?? {}) as Record<string, unknown>;

/** The steering extension's method and answer (docs/editors.md "Steering a running turn"). */
export const STEERING_METHOD = "_session/steering";
export interface SteerResponse {
  outcome: "injected" | "startedNewTurn" | "promptRequired" | "failed" | string;
  reason?: string;
}

export type { acp };

export interface ClientHost {
  /** every `session/update` notification, in arrival order */
  onSessionUpdate(n: acp.SessionNotification): void;
  requestPermission(p: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  readTextFile(p: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse>;
  writeTextFile(p: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse>;
  /** the agent's stderr, as it comes */
  onStderr?(text: string): void;
  /** the process is gone (or, by URL, the connection closed); `expected` when we stopped it */
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
  /** what ended it, for the user, when it was not a process exit (a closed network connection) */
  reason?: string;
}

/** What both ways of reaching the agent take. */
export interface ConnectionOptions {
  cwd: string;
  host: ClientHost;
  terminals?: TerminalManager;
  /** shared MCP-over-ACP provider; `mcp/message` requests are routed to it */
  mcpProvider?: acp.McpOverAcpProvider;
  /** serves the older `mcp/connect` / `mcp/message {connectionId}` / `mcp/disconnect` form */
  legacyMcp?: () => LegacyMcpRouter | undefined;
  clientInfo?: { name: string; version: string; title?: string };
  clientCapabilities?: acp.ClientCapabilities;
}

/** Spawn `command args` on this machine and speak ACP over its stdio. */
export interface StartOptions extends ConnectionOptions {
  command: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}

/** Reach a running `openvaala acp --listen HOST:PORT` by URL. */
export interface ConnectOptions extends ConnectionOptions {
  /** `http(s)://host:port/acp`; a `ws(s)://` URL is reached at the same endpoint over HTTP (see `serverHttpUrl`) */
  url: string;
  /** sent as `Authorization: Bearer <token>` on every request */
  token?: string;
}

/**
 * The URL the Streamable HTTP transport posts to. The server serves WebSocket and Streamable HTTP
 * on one `/acp` endpoint; Node's WebSocket cannot send an `Authorization` header, so a `ws(s)://`
 * URL is reached over `http(s)://` at the same place. A URL without a path gets `/acp`.
 */
export function serverHttpUrl(url: string): string {
  const given = url.trim();
  const scheme = /^(https?|wss?):\/\//i.exec(given)?.[1]?.toLowerCase();
  if (!scheme) throw new Error(`openvaala.server.url: "${url}" must start with http://, https://, ws:// or wss://`);
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    throw new Error(`openvaala.server.url: "${url}" is not a URL (expected e.g. http://127.0.0.1:8765/acp)`);
  }
  u.protocol = scheme === "https" || scheme === "wss" ? "https:" : "http:";
  if (u.pathname === "/" || u.pathname === "") u.pathname = "/acp";
  return u.toString();
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

/** The bytes or messages to and from the agent, and the process behind them when it is ours. */
interface AgentLink {
  /** the server process we started; absent when we reached a running server by URL */
  child?: ChildProcess;
  /** the URL we reached; absent for a child process */
  url?: string;
  stream: acp.Stream;
}

/** the answer of `_session/rewind_files` (docs/editors.md) */
export interface RewindFilesResult {
  files: { path: string; action: string }[];
  note?: string;
}

export class AgentConnection {
  readonly child: ChildProcess | undefined;
  /** the server's URL when it was reached over the network */
  readonly url: string | undefined;
  readonly connection: acp.ClientConnection;
  readonly terminals: TerminalManager;
  initializeResponse: acp.InitializeResponse | undefined;
  private stopping = false;
  private readonly stderr = new Tail();
  readonly exited: Promise<AgentExit>;

  private constructor(opts: ConnectionOptions, link: AgentLink, exited: (self: AgentConnection) => Promise<AgentExit>) {
    this.child = link.child;
    this.url = link.url;
    this.terminals = opts.terminals ?? new TerminalManager(opts.cwd);
    this.connection = AgentConnection.clientApp(opts, this.terminals).connect(link.stream);
    this.exited = exited(this);
  }

  /** The editor's side of ACP: what the agent may ask of us, routed to `opts.host`. */
  private static clientApp(opts: ConnectionOptions, terminals: TerminalManager) {
    const host = opts.host;
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
    return app;
  }

  /** newline-delimited JSON over the child's stdin/stdout, with the traffic tap on the lines */
  private static stdioStream(child: ChildProcess, host: ClientHost): acp.Stream {
    let toAgent = Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>;
    let fromAgent = Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>;
    const onTraffic = host.onTraffic?.bind(host);
    if (onTraffic) {
      const sent = lineTap("send", onTraffic);
      void sent.readable.pipeTo(toAgent).catch(() => {});
      toAgent = sent.writable;
      fromAgent = fromAgent.pipeThrough(lineTap("recv", onTraffic));
    }
    return acp.ndJsonStream(toAgent, fromAgent);
  }

  /** the SDK's Streamable HTTP client transport, with the traffic tap on the messages */
  private static httpStream(url: string, token: string | undefined, host: ClientHost): acp.Stream {
    const stream = createHttpStream(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {}) as unknown as acp.Stream;
    const onTraffic = host.onTraffic?.bind(host);
    if (!onTraffic) return stream;
    const sent = messageTap("send", onTraffic);
    void sent.readable.pipeTo(stream.writable).catch(() => {});
    return { writable: sent.writable, readable: stream.readable.pipeThrough(messageTap("recv", onTraffic)) };
  }

  /**
   * Connects to a running `openvaala acp --listen` by URL. Nothing is sent until `initialize`;
   * an unreachable server or a refused token fails that call. The connection's end is reported
   * as an exit (`reason` says what happened); the server and its sessions live on.
   */
  static connect(opts: ConnectOptions): AgentConnection {
    const url = serverHttpUrl(opts.url);
    const stream = AgentConnection.httpStream(url, opts.token, opts.host);
    const self = new AgentConnection(opts, { url, stream }, (conn) => {
      const ended = (): AgentExit => {
        const info: AgentExit = { code: null, signal: null, expected: conn.stopping, stderrTail: "", reason: `the connection to ${url} closed` };
        conn.terminals.disposeAll();
        opts.host.onExit?.(info);
        return info;
      };
      return conn.connection.closed.then(ended, ended);
    });
    self.pendingInit = AgentConnection.initializeRequest(opts);
    return self;
  }

  private static initializeRequest(opts: ConnectionOptions): acp.InitializeRequest {
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: opts.clientCapabilities ?? DEFAULT_CLIENT_CAPABILITIES,
      clientInfo: opts.clientInfo ?? { name: "openvaala-vscode", version: "0.0.0" },
    };
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
    self = new AgentConnection(opts, { child, stream: AgentConnection.stdioStream(child, opts.host) }, () => exited);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      self!.stderr.push(d);
      opts.host.onStderr?.(d);
    });
    (self as { clientInfo?: unknown }).clientInfo = opts.clientInfo;
    self.pendingInit = AgentConnection.initializeRequest(opts);
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

  /** `_meta.steering.supported` (codex-acp, claude-agent-acp, OpenVaala): a message can join a running turn */
  get supportsSteering(): boolean {
    const meta = this.initializeResponse?._meta as { steering?: { supported?: unknown } } | null | undefined;
    return meta?.steering?.supported === true;
  }

  /**
   * `_session/steering`: the message joins the running turn. `promptRequired` when no turn runs:
   * the chat then sends it as a prompt itself, so one place owns the turn's start and end.
   */
  steer(sessionId: string, prompt: acp.ContentBlock[]): Promise<SteerResponse> {
    return this.agent.request(STEERING_METHOD, { sessionId, prompt, _meta: { steering: { idleBehavior: "promptRequired" } } } as never);
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

  /** `messageId`: the user message's id (the server's _session/rewind names messages by it) */
  prompt(sessionId: string, input: PromptInput, messageId?: string): Promise<acp.PromptResponse> {
    const prompt: acp.ContentBlock[] = typeof input === "string" ? [{ type: "text", text: input }] : input;
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt, ...(messageId ? { messageId } : {}) } as acp.PromptRequest);
  }

  /** `_session/rewind`: the message and everything after it leave the conversation */
  rewind(sessionId: string, messageId: string): Promise<unknown> {
    return this.agent.request("_session/rewind" as never, { sessionId, messageId } as never);
  }

  /** `_session/rewind_files`: the files the agent changed from the message on, put back (or listed: dryRun) */
  rewindFiles(sessionId: string, messageId: string, dryRun: boolean): Promise<RewindFilesResult> {
    return this.agent.request("_session/rewind_files" as never, { sessionId, messageId, dryRun } as never) as Promise<RewindFilesResult>;
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
    return this.child?.pid;
  }

  get isRunning(): boolean {
    if (!this.child) return !this.connection.signal.aborted;
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends stdin, waits up to `grace` ms, then kills the process group. By URL: closes the connection (the server runs on). */
  async stop(grace = 1500): Promise<AgentExit> {
    this.stopping = true;
    this.terminals.disposeAll();
    try {
      this.connection.close();
    } catch {
      /* ignore */
    }
    if (!this.child) return this.exited;
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
    const child = this.child;
    if (child?.pid === undefined) return;
    try {
      if (process.platform === "win32") child.kill();
      else process.kill(-child.pid, signal);
    } catch {
      /* gone */
    }
  }
}
