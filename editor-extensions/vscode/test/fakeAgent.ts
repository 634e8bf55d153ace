// Stand-ins for a folder's server connection, a chat's host and a FolderAgent, for tests of the
// chat and its webviews without a server process: the connection records every call and answers
// as the test tells it.
/* eslint-disable @typescript-eslint/no-explicit-any */
import * as vscode from "vscode";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { AgentConnection } from "../src/core/acpClient.js";
import { ChatSession, type ChatSessionHost } from "../src/vscode/chatSession.js";
import type { Diff } from "../src/core/editHighlight.js";
import type { FolderAgent } from "../src/vscode/folderAgent.js";

export type Call = [method: string, ...args: unknown[]];

/** an AgentConnection stand-in: records every call; `answers` overrides what a method returns */
export class FakeConn {
  calls: Call[] = [];
  isRunning = true;
  supportsClose = true;
  supportsLoad = true;
  supportsSteering = false;
  promptCapabilities: acp.PromptCapabilities = {};
  private exit: (() => void) | undefined;
  readonly exited = new Promise<void>((r) => (this.exit = r));
  private sessions = 0;
  answers: Partial<Record<string, (...a: unknown[]) => Promise<unknown>>> = {};

  get capabilities() {
    return { promptCapabilities: this.promptCapabilities };
  }
  die() {
    this.isRunning = false;
    this.exit!();
  }
  private call(method: string, args: unknown[], dflt: () => unknown): Promise<any> {
    this.calls.push([method, ...args]);
    const a = this.answers[method];
    return a ? a(...args) : Promise.resolve(dflt());
  }
  of(method: string) {
    return this.calls.filter((c) => c[0] === method).map((c) => c.slice(1));
  }
  newSession(cwd: string, mcp: unknown) {
    return this.call("newSession", [cwd, mcp], () => ({ sessionId: `s${++this.sessions}` }));
  }
  loadSession(id: string, cwd: string, mcp: unknown) {
    return this.call("loadSession", [id, cwd, mcp], () => ({}));
  }
  closeSession(id: string) {
    return this.call("closeSession", [id], () => ({}));
  }
  /** the messageId of each prompt, in order (kept apart: `prompt` calls record [sessionId, input]) */
  messageIds: (string | undefined)[] = [];
  prompt(id: string, input: unknown, messageId?: string) {
    this.messageIds.push(messageId);
    return this.call("prompt", [id, input], () => ({ stopReason: "end_turn" }));
  }
  rewind(id: string, messageId: string) {
    return this.call("rewind", [id, messageId], () => ({ rewound: true, sessionId: id }));
  }
  rewindFiles(id: string, messageId: string, dryRun: boolean) {
    return this.call("rewindFiles", [id, messageId, dryRun], () => ({ files: [] }));
  }
  steer(id: string, prompt: unknown) {
    return this.call("steer", [id, prompt], () => ({ outcome: "injected" }));
  }
  cancel(id: string) {
    return this.call("cancel", [id], () => undefined);
  }
  setMode(id: string, modeId: string) {
    return this.call("setMode", [id, modeId], () => ({}));
  }
  setConfigOption(id: string, configId: string, value: unknown) {
    return this.call("setConfigOption", [id, configId, value], () => ({}));
  }
}

export class FakeHost implements ChatSessionHost {
  conn: AgentConnection | undefined;
  restarting: Promise<void> | undefined;
  mcpServers: acp.McpServer[] = [];
  sessions: acp.SessionInfo[] = [];
  cwd = "/work/folder";
  configFile = "/home/u/.config/openvaala/config.yaml";
  fires = 0;
  edits: Diff[] = [];
  turnsStarted = 0;
  constructor(readonly fake = new FakeConn()) {
    this.conn = fake as unknown as AgentConnection;
  }
  async ensureStarted() {
    this.conn = this.fake as unknown as AgentConnection;
    return this.conn;
  }
  fire() {
    this.fires++;
  }
  onEdit(d: Diff) {
    this.edits.push(d);
  }
  onTurnStarted() {
    this.turnsStarted++;
  }
}


/**
 * What the chat webviews use of a FolderAgent: its folder, its side bar chat (`main`) and tab chats
 * (real ChatSessions on one FakeHost), the session list, terminals and a change event.
 */
export class FakeAgent {
  readonly host = new FakeHost();
  readonly main = new ChatSession(this.host);
  readonly chats: ChatSession[] = [];
  readonly closed: ChatSession[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  sessions: acp.SessionInfo[] = [];
  running = false;
  shownTerminals: string[] = [];
  listSessionsAnswer: () => Promise<acp.SessionInfo[]> = async () => this.sessions;
  constructor(readonly folder: vscode.WorkspaceFolder) {
    this.host.fire = () => {
      this.host.fires++;
      this.changed.fire();
    };
  }
  get conn() {
    return this.host.fake;
  }
  get connection() {
    return this.running ? { supportsSessionList: true } : undefined;
  }
  terminalViews() {
    return [];
  }
  showTerminal(id: string) {
    this.shownTerminals.push(id);
  }
  async listSessions() {
    this.sessions = await this.listSessionsAnswer();
    this.changed.fire();
    return this.sessions;
  }
  openChat() {
    const c = new ChatSession(this.host);
    this.chats.push(c);
    return c;
  }
  closeChat(c: ChatSession) {
    this.closed.push(c);
  }
  asFolderAgent() {
    return this as unknown as FolderAgent;
  }
}
