// Helpers for tests against test/fixtures/scripted-agent.mjs: the stand-in ACP server that records
// what the extension sends and runs scripted prompts (see the fixture's header).
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { AgentConnection, AgentExit, ClientHost } from "../src/core/acpClient.js";
import { EXT_ROOT } from "./util.js";

export const SCRIPTED_AGENT = path.join(EXT_ROOT, "test", "fixtures", "scripted-agent.mjs");

export interface Received {
  method: string;
  params: any;
}

/** What the scripted agent has received so far, and the results of its script steps. */
export async function agentLog(conn: AgentConnection | acp.ClientContext): Promise<{ received: Received[]; results: any[] }> {
  const agent = "agent" in conn ? conn.agent : conn;
  return (await agent.request("_test/received", {} as never)) as never;
}

export async function receivedOf(conn: AgentConnection | acp.ClientContext, method: string): Promise<any[]> {
  return (await agentLog(conn)).received.filter((r) => r.method === method).map((r) => r.params);
}

/** A prompt text that the scripted agent runs as a script. */
export function script(...steps: unknown[]): string {
  return JSON.stringify(steps);
}

/** Arguments for the scripted agent (`node scripted-agent.mjs ...`). */
export function scriptedArgs(opts: { caps?: unknown; session?: unknown; sessions?: unknown; replay?: unknown; stderr?: string; exitOnInit?: number; linger?: boolean; initDelayMs?: number } = {}): string[] {
  const a = [SCRIPTED_AGENT];
  if (opts.caps !== undefined) a.push("--caps", JSON.stringify(opts.caps));
  if (opts.session !== undefined) a.push("--session", JSON.stringify(opts.session));
  if (opts.sessions !== undefined) a.push("--sessions", JSON.stringify(opts.sessions));
  if (opts.replay !== undefined) a.push("--replay", JSON.stringify(opts.replay));
  if (opts.stderr !== undefined) a.push("--stderr", opts.stderr);
  if (opts.exitOnInit !== undefined) a.push("--exit-on-init", String(opts.exitOnInit));
  if (opts.linger) a.push("--linger");
  if (opts.initDelayMs !== undefined) a.push("--init-delay", String(opts.initDelayMs));
  return a;
}

/** A ClientHost that records everything and answers with what the test sets. */
export class RecordingHost implements ClientHost {
  updates: acp.SessionNotification[] = [];
  permissionRequests: acp.RequestPermissionRequest[] = [];
  reads: acp.ReadTextFileRequest[] = [];
  writes: acp.WriteTextFileRequest[] = [];
  stderr = "";
  exits: AgentExit[] = [];
  unknown: { method: string; params: unknown }[] = [];
  permissionAnswer: (p: acp.RequestPermissionRequest, signal: AbortSignal) => Promise<acp.RequestPermissionResponse> = async () => ({ outcome: { outcome: "cancelled" } });
  fileText = "file text";

  onSessionUpdate(n: acp.SessionNotification) {
    this.updates.push(n);
  }
  requestPermission(p: acp.RequestPermissionRequest, signal: AbortSignal) {
    this.permissionRequests.push(p);
    return this.permissionAnswer(p, signal);
  }
  async readTextFile(p: acp.ReadTextFileRequest) {
    this.reads.push(p);
    return { content: this.fileText };
  }
  async writeTextFile(p: acp.WriteTextFileRequest) {
    this.writes.push(p);
    return {};
  }
  onStderr(t: string) {
    this.stderr += t;
  }
  onExit(i: AgentExit) {
    this.exits.push(i);
  }
  onUnknownRequest(method: string, params: unknown) {
    this.unknown.push({ method, params });
  }
}
