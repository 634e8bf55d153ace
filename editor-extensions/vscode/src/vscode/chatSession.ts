// One chat: an ACP session on a folder's server connection, its chat state, its pending
// permission prompts and its queue of messages typed during a turn. The side bar has one per
// folder (FolderAgent.main); each editor tab has its own.
import { randomUUID } from "node:crypto";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import type { AgentConnection, RewindFilesResult } from "../core/acpClient.js";
import { initialChatState, reduce, type ChatEvent, type ChatState } from "../core/chatState.js";
import type { FileChange, UndoOutcome } from "../core/turnChanges.js";
import { newlyCompletedDiffs, type Diff } from "../core/editHighlight.js";
import { PromptQueue, type QueuedPrompt } from "../core/promptQueue.js";
import { promptBlocks, type Attachment, type ResolvedAttachment } from "../core/attachments.js";
import { persistedChat, type PersistedChat } from "../core/chatPersist.js";
import { turnErrorText } from "../core/errorHints.js";
import { readTextFile, undoFile } from "./fsHost.js";

export interface ChatSessionHost {
  readonly conn: AgentConnection | undefined;
  readonly restarting: Promise<void> | undefined;
  readonly mcpServers: acp.McpServer[];
  readonly sessions: acp.SessionInfo[];
  readonly cwd: string;
  /** the server's config.yaml (named in errors whose fix is there) */
  readonly configFile: string;
  ensureStarted(): Promise<AgentConnection>;
  /** something to redraw */
  fire(): void;
  onEdit(d: Diff): void;
  onTurnStarted(): void;
}

const EXIT_GRACE_MS = 300;
export const SERVER_STOPPED = "The OpenVaala server stopped during the turn.";

export class ChatSession {
  state: ChatState = initialChatState();
  readonly queue = new PromptQueue();
  private readonly permissionWaiters = new Map<string, (optionId: string | undefined) => void>();
  private closed = false;
  /** a prompt on its way (its session being opened): a second message waits in the queue */
  private starting = false;
  /** the session being reopened after a window reload (until session/load answers) */
  private reopening: string | undefined;

  constructor(private readonly host: ChatSessionHost) {}

  emit(e: ChatEvent) {
    this.state = reduce(this.state, e);
    this.host.fire();
  }

  /** a session/update of this chat's session */
  onUpdate(update: acp.SessionUpdate) {
    const id = (update as { toolCallId?: string }).toolCallId;
    const before = id ? this.state.toolCalls[id] : undefined;
    this.emit({ type: "update", update });
    if (id && this.state.busy) for (const d of newlyCompletedDiffs(before, this.state.toolCalls[id])) this.host.onEdit(d);
  }

  askPermission(requestId: string, p: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    this.emit({ type: "permissionRequested", requestId, request: p });
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

  answerPermission(requestId: string, optionId: string | undefined) {
    this.permissionWaiters.get(requestId)?.(optionId);
  }

  /** the server went away: prompts are moot, a running turn is over */
  serverStopped() {
    for (const w of [...this.permissionWaiters.values()]) w(undefined);
    if (this.state.busy) this.emit({ type: "turnEnded", error: SERVER_STOPPED });
  }

  /**
   * An empty chat whose revision goes on from the old one: the webview redraws an item only when
   * its revision changes, so a counter that started over would show stale items.
   */
  clearedChat(): ChatState {
    return reduce(this.state, { type: "reset" });
  }

  /**
   * Closes the session this chat leaves (New, another session loaded, the tab closed) when the
   * agent supports it: the server keeps every session it opened until then, and will not load one
   * that is still open (History in another tab).
   */
  private async leaveSession(): Promise<void> {
    const id = this.state.sessionId;
    const conn = this.host.conn;
    if (!id || id.startsWith("loading:") || !conn?.isRunning || !conn.supportsClose) return;
    await conn.closeSession(id).catch(() => undefined);
  }

  /** A new session (the old chat is cleared). */
  async newChat(): Promise<void> {
    const conn = await this.host.ensureStarted();
    await this.leaveSession();
    const s = await conn.newSession(this.host.cwd, this.host.mcpServers);
    this.state = reduce(this.clearedChat(), { type: "sessionStarted", sessionId: s.sessionId, modes: s.modes ?? null, configOptions: s.configOptions ?? null });
    this.host.fire();
  }

  async ensureSession(): Promise<string> {
    await this.host.restarting;
    if (!this.state.sessionId || !this.host.conn?.isRunning) await this.newChat();
    return this.state.sessionId!;
  }

  /** a message from the input: sent now, steered into the running turn (agents that take it), or queued while a turn runs */
  send(text: string, attachments: Attachment[] = []): Promise<unknown> {
    if (this.state.busy && !this.starting && this.state.sessionId && this.host.conn?.supportsSteering) return this.steer(text, attachments);
    if (this.state.busy || this.starting) {
      this.queue.add(text, attachments);
      this.host.fire();
      return Promise.resolve();
    }
    return this.prompt(text, attachments);
  }

  /**
   * Sends a message into the running turn (`_session/steering`): shown marked as steered at once;
   * when the turn ended meanwhile it goes as a prompt (or waits in the queue), and when the agent
   * refused it (a hook, which says why) it is taken out of the chat.
   */
  private async steer(text: string, attachments: Attachment[]): Promise<unknown> {
    const conn = this.host.conn!;
    const sessionId = this.state.sessionId!;
    const { blocks } = promptBlocks(text, await resolve(attachments), conn.capabilities.promptCapabilities);
    this.emit({ type: "steered", text, attachments: attachments.map((a) => a.name) });
    let outcome: string;
    try {
      outcome = (await conn.steer(sessionId, blocks)).outcome;
    } catch (e) {
      this.emit({ type: "steerDropped" });
      this.queue.add(text, attachments);
      this.emit({ type: "notice", severity: "warning", text: `The message could not join the turn; it waits in the queue (${(e as Error).message})` });
      return;
    }
    if (outcome === "injected") return;
    this.emit({ type: "steerDropped" });
    if (outcome !== "promptRequired") return;  // refused: the agent told the user why
    if (this.state.busy || this.starting) {
      this.queue.add(text, attachments);
      this.host.fire();
      return;
    }
    return this.prompt(text, attachments);
  }

  /** takes a queued message out (the user removed it); returns it, e.g. to put it back into the input */
  unqueue(id: string): QueuedPrompt | undefined {
    const q = this.queue.remove(id);
    this.host.fire();
    return q;
  }

  async prompt(text: string, attachments: Attachment[] = []): Promise<acp.PromptResponse | undefined> {
    let sessionId: string;
    let resolved: ResolvedAttachment[];
    this.starting = true;
    try {
      sessionId = await this.ensureSession();
      resolved = await resolve(attachments);
    } finally {
      this.starting = false;
    }
    const conn = this.host.conn!;
    const { blocks, dropped } = promptBlocks(text, resolved, conn.capabilities.promptCapabilities);
    // our own id for the message, so that it can be taken back (_session/rewind) from this chat
    const messageId = `msg_vsc_${randomUUID()}`;
    this.emit({ type: "userPrompt", text, attachments: attachments.map((a) => a.name), messageId });
    if (dropped.length) this.emit({ type: "notice", severity: "warning", text: `The agent does not take images; left out: ${dropped.join(", ")}` });
    this.emit({ type: "turnStarted" });
    this.host.onTurnStarted();
    let r: acp.PromptResponse | undefined;
    try {
      r = await conn.prompt(sessionId, attachments.length ? blocks : text, messageId);
      this.emit({ type: "turnEnded", stopReason: r.stopReason, usage: r.usage });
    } catch (e) {
      const serverGone = await exitsSoon(this.host.conn);
      // when the server died, onExit has ended the turn with SERVER_STOPPED already
      if (this.state.busy) this.emit({ type: "turnEnded", error: serverGone ? SERVER_STOPPED : turnErrorText((e as Error).message, this.host.configFile) });
    }
    const next = this.closed ? undefined : this.queue.next({ stopReason: r?.stopReason, error: !r });
    if (next) {
      this.host.fire();
      void this.prompt(next.text, next.attachments);
    }
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

  /** the user message `itemId` (one with an id, not during a turn) and this chat's session */
  private rewindable(itemId: string): { messageId: string; text: string; sessionId: string } | undefined {
    const item = this.state.items.find((i) => i.id === itemId);
    const sessionId = this.state.sessionId;
    if (item?.kind !== "user" || !item.messageId || !sessionId || !this.host.conn) return undefined;
    if (this.state.busy) {
      this.emit({ type: "notice", severity: "warning", text: "Stop the running turn first: a message cannot be taken back during it." });
      return undefined;
    }
    return { messageId: item.messageId, text: item.text, sessionId };
  }

  /** "Edit and resend": the message and everything after it leave the conversation; returns its text for the input */
  async editAndResend(itemId: string): Promise<string | undefined> {
    const m = this.rewindable(itemId);
    if (!m) return undefined;
    await this.host.conn!.rewind(m.sessionId, m.messageId);
    this.emit({ type: "rewound", itemId });
    return m.text;
  }

  /**
   * "Restore files to here": the files the agent changed from the message on, listed (a dry run),
   * then put back once `confirm` agrees with that list. Returns what was done (undefined: nothing).
   */
  async restoreFilesTo(itemId: string, confirm: (files: RewindFilesResult["files"]) => Promise<boolean>): Promise<RewindFilesResult | undefined> {
    const m = this.rewindable(itemId);
    if (!m) return undefined;
    const conn = this.host.conn!;
    const plan = await conn.rewindFiles(m.sessionId, m.messageId, true);
    if (!plan.files.length) {
      this.emit({ type: "notice", severity: "info", text: "No file to restore: the agent changed none from this message on." });
      return undefined;
    }
    if (!(await confirm(plan.files))) return undefined;
    const done = await conn.rewindFiles(m.sessionId, m.messageId, false);
    const left = done.files.filter((f) => f.action !== "restore" && f.action !== "delete").map((f) => `${f.path} (${f.action})`);
    this.emit({ type: "notice", severity: left.length ? "warning" : "info",
      text: `Files restored: ${done.files.length - left.length}` + (left.length ? `; left alone: ${left.join(", ")}` : "") + (done.note ? ` ${done.note}` : "") });
    return done;
  }

  async cancel(): Promise<void> {
    for (const w of [...this.permissionWaiters.values()]) w(undefined);
    const conn = this.host.conn;
    if (conn && this.state.sessionId) await conn.cancel(this.state.sessionId);
  }

  async setMode(modeId: string): Promise<void> {
    const conn = this.host.conn;
    if (!conn || !this.state.sessionId) return;
    await conn.setMode(this.state.sessionId, modeId);
    this.emit({ type: "modeSet", modeId });
  }

  async setConfigOption(configId: string, value: string | boolean): Promise<void> {
    const conn = this.host.conn;
    if (!conn || !this.state.sessionId) return;
    const r = await conn.setConfigOption(this.state.sessionId, configId, value);
    if (r.configOptions) this.emit({ type: "configOptions", configOptions: r.configOptions });
  }

  /** Loads a stored session; its history is replayed into a fresh chat (or, after a restart, `keepChat`). */
  async loadSession(sessionId: string, keepChat = false): Promise<void> {
    const conn = await this.host.ensureStarted();
    if (!keepChat) {
      await this.leaveSession();
      this.state = reduce(this.clearedChat(), { type: "sessionStarted", sessionId });
      this.host.fire();
    } else {
      // replayed history would duplicate what is shown: ignore updates until the load returns
      this.state = { ...this.state, sessionId: `loading:${sessionId}` };
    }
    const r = await conn.loadSession(sessionId, this.host.cwd, this.host.mcpServers);
    const title = this.host.sessions.find((s) => s.sessionId === sessionId)?.title ?? null;
    this.emit({ type: "sessionStarted", sessionId, modes: r.modes ?? null, configOptions: r.configOptions ?? null, title });
  }

  /** what of this chat outlives a window reload (see core/chatPersist.ts) */
  persisted(folder?: string): PersistedChat {
    const id = this.state.sessionId?.replace(/^loading:/, "") || this.reopening;
    return persistedChat(id, this.queue.list, folder);
  }

  /**
   * Brings a chat back after a window reload: its queued messages (queued again, never sent
   * behind the user's back: the turn they waited for is gone) and its session, reopened with
   * session/load. A session that cannot be reopened leaves a notice and an empty chat.
   */
  async restore(p: PersistedChat): Promise<void> {
    for (const q of p.queue) this.queue.add(q.text, q.attachments);
    if (p.queue.length) this.host.fire();
    if (!p.sessionId || this.state.sessionId) return;
    this.reopening = p.sessionId;
    try {
      const conn = await this.host.ensureStarted();
      if (!conn.supportsLoad) return;
      await this.loadSession(p.sessionId);
    } catch (e) {
      this.state = this.clearedChat();
      this.emit({ type: "notice", severity: "warning", text: `Could not reopen the previous session: ${(e as Error).message}` });
    } finally {
      this.reopening = undefined;
    }
  }

  /** the tab closed: its turn is stopped, its queue dropped */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    if (this.state.busy) await this.cancel().catch(() => undefined);
    await this.leaveSession();
  }
}

/** file attachments with their text as the user sees it (open documents' unsaved edits included) */
async function resolve(attachments: Attachment[]): Promise<ResolvedAttachment[]> {
  return Promise.all(
    attachments.map(async (a) => {
      if (a.kind !== "file") return a;
      try {
        return { ...a, text: (await readTextFile({ sessionId: "", path: a.path })).content };
      } catch {
        return a;
      }
    }),
  );
}

/** whether the server process is gone or goes within a moment (a prompt fails before the exit is seen) */
async function exitsSoon(conn: AgentConnection | undefined): Promise<boolean> {
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
