// MCP-over-ACP relay: each MCP server the user configured in VS Code runs on the editor's machine
// (a stdio child, or an http/sse connection) behind an MCP SDK client, and is offered to the agent
// as `{type:"acp", name, serverId}` through the ACP SDK's McpOverAcpProvider. Inner requests from
// the agent (stateless MCP 2026-07-28: `server/discover`, `tools/list`, `tools/call`, …) are
// forwarded to the real server. The older connection-based form (`mcp/connect`,
// `mcp/message {connectionId}`, `mcp/disconnect`) is served too. No `vscode` import.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerConfig } from "./mcpConfig.js";

const AnyResult = z.looseObject({});

/** `_meta` keys of the stateless binding that the real (stateful) server must not see. */
const BINDING_META_PREFIX = "io.modelcontextprotocol/";

export function stripBindingMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!params) return params;
  const meta = params._meta as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== "object") return params;
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (!k.startsWith(BINDING_META_PREFIX)) rest[k] = v;
  const out = { ...params };
  if (Object.keys(rest).length) out._meta = rest;
  else delete out._meta;
  return out;
}

export interface RelayLog {
  (line: string): void;
}

export interface McpRelayOptions {
  clientInfo?: { name: string; version: string };
  log?: RelayLog;
  /** per-request timeout in ms (reset on progress) */
  timeoutMs?: number;
}

/** One real MCP server behind an MCP SDK client; connected lazily, reconnected after a failure. */
export class McpRelay {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private closed = false;
  readonly stderrTail: string[] = [];

  constructor(readonly config: McpServerConfig, private readonly opts: McpRelayOptions = {}) {}

  get name(): string {
    return this.config.name;
  }

  private log(s: string) {
    this.opts.log?.(`[mcp ${this.config.name}] ${s}`);
  }

  private makeTransport(): Transport {
    const c = this.config;
    if (c.type === "stdio") {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
      Object.assign(env, c.env);
      const t = new StdioClientTransport({ command: c.command, args: c.args, env, ...(c.cwd ? { cwd: c.cwd } : {}), stderr: "pipe" });
      t.stderr?.on("data", (d: Buffer) => {
        const s = d.toString("utf8");
        this.stderrTail.push(s);
        if (this.stderrTail.length > 50) this.stderrTail.shift();
        this.log(s.trimEnd());
      });
      return t;
    }
    const url = new URL(c.url);
    const requestInit: RequestInit = { headers: c.headers };
    if (c.type === "sse") return new SSEClientTransport(url, { requestInit });
    return new StreamableHTTPClientTransport(url, { requestInit });
  }

  /** Connects (once) and returns the client. */
  async connect(): Promise<Client> {
    if (this.closed) throw new Error(`MCP server ${this.config.name} is stopped`);
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const client = new Client(this.opts.clientInfo ?? { name: "openvaala-vscode", version: "0.1.0" }, { capabilities: {} });
      client.onclose = () => {
        if (this.client === client) this.client = undefined;
        this.log("connection closed");
      };
      client.onerror = (e) => this.log(`error: ${e.message}`);
      try {
        await client.connect(this.makeTransport());
      } catch (e) {
        this.connecting = undefined;
        throw e;
      }
      this.client = client;
      this.connecting = undefined;
      this.log(`connected: ${JSON.stringify(client.getServerVersion() ?? {})}`);
      return client;
    })();
    return this.connecting;
  }

  /** What `server/discover` / `initialize` answer: the real server's identity and capabilities. */
  async discover(protocolVersion?: string): Promise<Record<string, unknown>> {
    const c = await this.connect();
    const r: Record<string, unknown> = {
      protocolVersion: protocolVersion ?? acp.MCP_PROTOCOL_VERSION,
      supportedVersions: [acp.MCP_PROTOCOL_VERSION],
      capabilities: c.getServerCapabilities() ?? {},
      serverInfo: c.getServerVersion() ?? { name: this.config.name, version: "0" },
    };
    const instructions = c.getInstructions();
    if (instructions) r.instructions = instructions;
    return r;
  }

  /**
   * Forwards one inner MCP request. Resolves with the result; rejects with an McpProtocolError for an
   * inner MCP error (the real server answered with an error), or another Error when the backend failed.
   */
  async call(
    method: string,
    params: Record<string, unknown> | undefined,
    opts: { signal?: AbortSignal; onProgress?: (p: Record<string, unknown>) => void; protocolVersion?: string } = {},
  ): Promise<unknown> {
    if (method === "server/discover" || method === "initialize") return this.discover(opts.protocolVersion ?? (params?.protocolVersion as string | undefined));
    if (method === "ping") {
      await this.connect();
      return {};
    }
    if (method.startsWith("notifications/")) return {};
    const client = await this.connect();
    const p = stripBindingMeta(params);
    try {
      return await client.request({ method, ...(p ? { params: p } : {}) } as never, AnyResult, {
        ...(opts.signal ? { signal: opts.signal } : {}),
        timeout: this.opts.timeoutMs ?? 10 * 60_000,
        resetTimeoutOnProgress: true,
        ...(opts.onProgress ? { onprogress: (pr: Record<string, unknown>) => opts.onProgress!(pr) } : {}),
      });
    } catch (e) {
      const err = e as { code?: unknown; message?: string; data?: unknown };
      if (typeof err.code === "number") {
        const msg = (err.message ?? "MCP error").replace(/^MCP error -?\d+: /, "");
        throw new acp.McpProtocolError(err.code, msg, err.data);
      }
      throw e;
    }
  }

  /** The McpOverAcpProvider handler for this server. */
  readonly handler: acp.McpRequestHandler = async (ctx) => {
    const result = await this.call(ctx.method, ctx.params, {
      signal: ctx.signal,
      protocolVersion: ctx.protocolVersion,
      onProgress: (p) => {
        void ctx.notify("notifications/progress", p).catch(() => {});
      },
    });
    return { result };
  };

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    try {
      await c?.close();
    } catch {
      /* ignore */
    }
  }
}

/** Legacy `mcp/connect` / `mcp/message {connectionId}` / `mcp/disconnect` on top of the same relays. */
export class LegacyMcpRouter {
  private readonly connections = new Map<string, McpRelay>();
  constructor(private readonly lookup: (id: string) => McpRelay | undefined) {}

  connect(params: Record<string, unknown>): { connectionId: string } {
    const id = String(params.serverId ?? params.acpId ?? params.id ?? "");
    const relay = this.lookup(id);
    if (!relay) throw new acp.RequestError(acp.McpBindingErrorCode.serverUnavailable, `unknown MCP server ${id}`);
    const connectionId = `conn-${randomUUID()}`;
    this.connections.set(connectionId, relay);
    return { connectionId };
  }

  async message(params: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const relay = this.connections.get(String(params.connectionId));
    if (!relay) throw new acp.RequestError(acp.McpBindingErrorCode.serverUnavailable, `unknown MCP connection ${String(params.connectionId)}`);
    try {
      return await relay.call(String(params.method), (params.params ?? undefined) as Record<string, unknown> | undefined, signal ? { signal } : {});
    } catch (e) {
      if (e instanceof acp.McpProtocolError) throw new acp.RequestError(e.code, e.message, e.data);
      throw e;
    }
  }

  disconnect(params: Record<string, unknown>): Record<string, never> {
    this.connections.delete(String(params.connectionId));
    return {};
  }
}

/**
 * All relays of one workspace folder. `declarations(connection, provider)` registers them on an ACP
 * connection and returns the `mcpServers` entries for `session/new`.
 */
export class McpHub {
  private readonly relays = new Map<string, McpRelay>(); // serverId -> relay
  private registrations: acp.McpServerRegistration[] = [];

  constructor(configs: McpServerConfig[], private readonly opts: McpRelayOptions = {}) {
    for (const c of configs) this.relays.set(`vscode-${c.name}-${randomUUID().slice(0, 8)}`, new McpRelay(c, opts));
  }

  get size(): number {
    return this.relays.size;
  }

  relay(serverIdOrName: string): McpRelay | undefined {
    return this.relays.get(serverIdOrName) ?? [...this.relays.values()].find((r) => r.name === serverIdOrName);
  }

  /** Registers every relay on `context` (a ClientConnection's `agent`); returns declarations with the legacy `id` alias. */
  register(provider: acp.McpOverAcpProvider, context: acp.ClientContext): acp.McpServer[] {
    const out: acp.McpServer[] = [];
    for (const [serverId, relay] of this.relays) {
      let reg: acp.McpServerRegistration;
      try {
        reg = provider.registerServer(context, { name: relay.name, serverId, handler: relay.handler });
      } catch {
        // already registered on this connection (a second session): reuse the declaration
        out.push({ type: "acp", name: relay.name, serverId } as acp.McpServer);
        continue;
      }
      this.registrations.push(reg);
      out.push(reg.declaration as acp.McpServer);
    }
    return out;
  }

  legacyRouter(): LegacyMcpRouter {
    return new LegacyMcpRouter((id) => this.relay(id));
  }

  async dispose(): Promise<void> {
    const regs = this.registrations;
    this.registrations = [];
    await Promise.allSettled(regs.map((r) => r.dispose()));
    await Promise.allSettled([...this.relays.values()].map((r) => r.close()));
  }
}
