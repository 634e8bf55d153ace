// Chat state of one session as a pure reducer over ACP session updates and UI events. The webview
// renders this state; the extension host owns it. No `vscode` import.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { turnChanges, type FileChange, type UndoOutcome } from "./turnChanges.js";
import { costSince, type SessionUsage, type TurnUsage } from "./usage.js";

export type ChatItem =
  | { kind: "user"; id: string; rev: number; text: string; attachments?: string[] | undefined; messageId?: string | undefined; steered?: boolean }
  | { kind: "agent"; id: string; rev: number; text: string; messageId?: string | undefined }
  | { kind: "thought"; id: string; rev: number; text: string; messageId?: string | undefined }
  | { kind: "tool"; id: string; rev: number; toolCallId: string }
  | { kind: "permission"; id: string; rev: number; requestId: string }
  | { kind: "notice"; id: string; rev: number; severity: "info" | "warning" | "error"; text: string; detail?: string | undefined }
  | { kind: "compaction"; id: string; rev: number; compactionId: string; status: string; summary: string; error?: string | undefined }
  | { kind: "plan"; id: string; rev: number }
  | { kind: "changes"; id: string; rev: number; files: FileChange[]; undo?: UndoOutcome[] | undefined }
  /** a turn's tokens and cost, under the turn */
  | ({ kind: "usage"; id: string; rev: number } & TurnUsage);

export interface ToolCallState {
  toolCallId: string;
  title: string;
  kind: acp.ToolKind;
  status: acp.ToolCallStatus;
  content: acp.ToolCallContent[];
  locations: acp.ToolCallLocation[];
  rawInput?: unknown;
  rawOutput?: unknown;
  rev: number;
}

export interface PermissionState {
  requestId: string;
  toolCall: acp.ToolCallUpdate;
  options: acp.PermissionOption[];
  /** optionId chosen, "cancelled", or undefined while pending */
  outcome?: string | undefined;
}

export interface ChatState {
  sessionId?: string | undefined;
  title?: string | undefined;
  items: ChatItem[];
  toolCalls: Record<string, ToolCallState>;
  permissions: Record<string, PermissionState>;
  plan: acp.PlanEntry[];
  modes?: acp.SessionModeState | undefined;
  configOptions: acp.SessionConfigOption[];
  commands: acp.AvailableCommand[];
  busy: boolean;
  lastStopReason?: string | undefined;
  /** the context (tokens used of the window) and the session's cost so far, from usage_update */
  usage?: { used: number; size: number; cost?: acp.Cost | undefined } | undefined;
  /** the tokens of this chat's turns (the prompts' answers), added up */
  sessionTokens?: { input: number; output: number } | undefined;
  /** the session's cost when the running turn began (amount 0 of any currency: a new session); undefined: unknown */
  costAtTurnStart?: { amount: number; currency?: string | undefined } | undefined;
  /** index in `items` where the running turn began */
  turnStart?: number | undefined;
  nextId: number;
  rev: number;
}

export type ChatEvent =
  | { type: "sessionStarted"; sessionId: string; modes?: acp.SessionModeState | null; configOptions?: acp.SessionConfigOption[] | null; title?: string | null }
  | { type: "reset" }
  | { type: "userPrompt"; text: string; attachments?: string[]; messageId?: string }
  /** the user message `itemId` and everything after it were taken back (_session/rewind) */
  | { type: "rewound"; itemId: string }
  /** a message sent into the running turn (shown marked; the agent's echo of it is not shown twice) */
  | { type: "steered"; text: string; attachments?: string[] }
  /** the last steered message did not join the turn: taken out of the chat */
  | { type: "steerDropped" }
  | { type: "update"; update: acp.SessionUpdate }
  | { type: "permissionRequested"; requestId: string; request: acp.RequestPermissionRequest }
  | { type: "permissionResolved"; requestId: string; outcome: string }
  | { type: "turnStarted" }
  | { type: "turnEnded"; stopReason?: string; error?: string; usage?: acp.Usage | null | undefined }
  | { type: "modeSet"; modeId: string }
  | { type: "configOptions"; configOptions: acp.SessionConfigOption[] }
  | { type: "notice"; severity: "info" | "warning" | "error"; text: string }
  | { type: "turnUndone"; itemId: string; outcomes: UndoOutcome[] };

export function initialChatState(): ChatState {
  return { items: [], toolCalls: {}, permissions: {}, plan: [], configOptions: [], commands: [], busy: false, nextId: 1, rev: 0 };
}

/** Text of a content block as it should appear in the chat (Markdown). */
export function contentText(block: acp.ContentBlock | undefined | null): string {
  if (!block) return "";
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return "[image]";
    case "audio":
      return "[audio]";
    case "resource_link":
      return `[${block.title ?? block.name}](${block.uri})`;
    case "resource": {
      const r = block.resource as { uri: string; text?: string };
      return r.text !== undefined ? `\n\`\`\`\n${r.text}\n\`\`\`\n` : `[${r.uri}](${r.uri})`;
    }
    default:
      return "";
  }
}

type NewItem = ChatItem extends infer T ? (T extends ChatItem ? Omit<T, "id" | "rev"> & { id?: string } : never) : never;

function push(s: ChatState, item: NewItem): ChatState {
  const id = item.id ?? `i${s.nextId}`;
  const full = { ...item, id, rev: s.rev + 1 } as ChatItem;
  return { ...s, items: [...s.items, full], nextId: s.nextId + 1, rev: s.rev + 1 };
}

function replaceLast(s: ChatState, item: ChatItem): ChatState {
  const items = s.items.slice(0, -1);
  items.push({ ...item, rev: s.rev + 1 });
  return { ...s, items, rev: s.rev + 1 };
}

function bumpItem(s: ChatState, pred: (i: ChatItem) => boolean): ChatState {
  const rev = s.rev + 1;
  return { ...s, rev, items: s.items.map((i) => (pred(i) ? { ...i, rev } : i)) };
}

function appendChunk(s: ChatState, kind: "user" | "agent" | "thought", text: string, messageId?: string | null): ChatState {
  const last = s.items[s.items.length - 1];
  if (last && last.kind === kind) {
    // a chunk without id, or after an item without one, belongs to it (the user's typed message has none)
    const sameMessage = !messageId || !last.messageId || last.messageId === messageId;
    if (sameMessage) return replaceLast(s, { ...last, text: last.text + text, ...(messageId && !last.messageId ? { messageId } : {}) } as ChatItem);
  }
  return push(s, { kind, text, messageId: messageId ?? undefined });
}

function lastIndexWhere<T>(items: readonly T[], pred: (i: T) => boolean): number {
  for (let n = items.length - 1; n >= 0; n--) if (pred(items[n]!)) return n;
  return -1;
}

/**
 * The agent's echo (user_message_chunk) of a message this chat steered in, which it shows already:
 * the first echo gives the newest steered message without an id its id, the later chunks of that
 * id are dropped. Undefined: not an echo of one.
 */
function echoOfSteered(s: ChatState, messageId: string | null | undefined): ChatState | undefined {
  if (!messageId) return undefined;
  if (s.items.some((i) => i.kind === "user" && i.steered && i.messageId === messageId)) return s;
  const at = lastIndexWhere(s.items, (i) => i.kind === "user" && !!i.steered && !i.messageId);
  if (at < 0) return undefined;
  const rev = s.rev + 1;
  return { ...s, rev, items: s.items.map((i, n) => (n === at ? { ...i, messageId, rev } as ChatItem : i)) };
}

function applyToolCall(s: ChatState, u: acp.ToolCallUpdate, isNew: boolean): ChatState {
  const prev = s.toolCalls[u.toolCallId];
  const rev = s.rev + 1;
  const base: ToolCallState = prev ?? {
    toolCallId: u.toolCallId,
    title: u.title ?? "",
    kind: u.kind ?? "other",
    status: u.status ?? "pending",
    content: [],
    locations: [],
    rev,
  };
  const next: ToolCallState = { ...base, rev };
  if (u.title != null) next.title = u.title;
  if (u.kind != null) next.kind = u.kind;
  if (u.status != null) next.status = u.status;
  // `content` and `locations` in an update replace the previous lists (ACP: "replaces")
  if (u.content != null) next.content = u.content;
  if (u.locations != null) next.locations = u.locations;
  if (u.rawInput !== undefined) next.rawInput = u.rawInput;
  if (u.rawOutput !== undefined) next.rawOutput = u.rawOutput;
  let st: ChatState = { ...s, toolCalls: { ...s.toolCalls, [u.toolCallId]: next }, rev };
  if (!prev) {
    st = push(st, { kind: "tool", toolCallId: u.toolCallId, id: `tool-${u.toolCallId}` });
  } else {
    st = bumpItem(st, (i) => i.kind === "tool" && i.toolCallId === u.toolCallId);
  }
  void isNew;
  return st;
}

type CompactionItem = Extract<ChatItem, { kind: "compaction" }>;

/** A compaction is one item, placed where its first update arrived and patched in place after. */
function patchCompaction(s: ChatState, compactionId: string, patch: (c: CompactionItem) => CompactionItem): ChatState {
  const id = `compaction-${compactionId}`;
  const at = s.items.findIndex((i) => i.kind === "compaction" && i.compactionId === compactionId);
  if (at < 0) return push(s, patch({ kind: "compaction", id, rev: 0, compactionId, status: "in_progress", summary: "" }));
  const rev = s.rev + 1;
  const items = s.items.slice();
  items[at] = { ...patch(items[at] as CompactionItem), rev };
  return { ...s, items, rev };
}

export function applyUpdate(s: ChatState, u: acp.SessionUpdate): ChatState {
  switch (u.sessionUpdate) {
    case "user_message_chunk":
      return echoOfSteered(s, u.messageId) ?? appendChunk(s, "user", contentText(u.content), u.messageId);
    case "agent_message_chunk":
      return appendChunk(s, "agent", contentText(u.content), u.messageId);
    case "agent_thought_chunk":
      return appendChunk(s, "thought", contentText(u.content), u.messageId);
    case "tool_call":
      return applyToolCall(s, u, true);
    case "tool_call_update":
      return applyToolCall(s, u, false);
    case "plan": {
      let st: ChatState = { ...s, plan: u.entries, rev: s.rev + 1 };
      const idx = st.items.findIndex((i) => i.kind === "plan");
      if (idx >= 0) {
        const items = st.items.slice();
        items.splice(idx, 1);
        st = { ...st, items };
      }
      return push(st, { kind: "plan", id: "plan" });
    }
    case "available_commands_update":
      return { ...s, commands: u.availableCommands, rev: s.rev + 1 };
    case "current_mode_update":
      return s.modes ? { ...s, modes: { ...s.modes, currentModeId: u.currentModeId }, rev: s.rev + 1 } : s;
    case "config_option_update":
      return { ...s, configOptions: u.configOptions, rev: s.rev + 1 };
    case "session_info_update":
      return u.title !== undefined ? { ...s, title: u.title ?? undefined, rev: s.rev + 1 } : s;
    case "usage_update":
      return { ...s, usage: { used: u.used, size: u.size, ...(u.cost ? { cost: u.cost } : {}) }, rev: s.rev + 1 };
    case "notice": {
      const sev = u.severity === "error" ? "error" : u.severity === "warning" ? "warning" : "info";
      return push(s, { kind: "notice", severity: sev, text: u.title, detail: u.description ?? undefined });
    }
    case "compaction_update":
      return patchCompaction(s, u.compactionId, (c) => ({
        ...c,
        status: u.status,
        // patch semantics: omitted keeps, null (or no blocks) clears, a value replaces
        summary: u.summary === undefined ? c.summary : (u.summary ?? []).map(contentText).join(""),
        error: u.error === undefined ? c.error : (u.error ?? undefined),
      }));
    case "compaction_summary_chunk":
      return patchCompaction(s, u.compactionId, (c) => ({ ...c, summary: c.summary + contentText(u.content) }));
    default:
      return s;
  }
}

export function reduce(s: ChatState, e: ChatEvent): ChatState {
  switch (e.type) {
    case "reset":
      return { ...initialChatState(), rev: s.rev + 1 };
    case "sessionStarted":
      return {
        ...s,
        sessionId: e.sessionId,
        modes: e.modes ?? undefined,
        configOptions: e.configOptions ?? [],
        title: e.title ?? s.title,
        rev: s.rev + 1,
      };
    case "userPrompt":
      return push(s, { kind: "user", text: e.text, ...(e.attachments?.length ? { attachments: e.attachments } : {}), ...(e.messageId ? { messageId: e.messageId } : {}) });
    case "rewound": {
      const at = s.items.findIndex((i) => i.id === e.itemId);
      return at < 0 ? s : { ...s, items: s.items.slice(0, at), rev: s.rev + 1 };
    }
    case "steered":
      return push(s, { kind: "user", text: e.text, steered: true, ...(e.attachments?.length ? { attachments: e.attachments } : {}) });
    case "steerDropped": {
      const at = lastIndexWhere(s.items, (i) => i.kind === "user" && !!i.steered);
      return at < 0 ? s : { ...s, items: s.items.filter((_, i) => i !== at), rev: s.rev + 1 };
    }
    case "update":
      return applyUpdate(s, e.update);
    case "permissionRequested": {
      const p: PermissionState = { requestId: e.requestId, toolCall: e.request.toolCall, options: e.request.options };
      let st: ChatState = { ...s, permissions: { ...s.permissions, [e.requestId]: p } };
      // the permission carries a tool call (often with the proposed diff): show it, and merge what
      // it adds into a tool call that already exists, so the user never approves an edit blind
      // (its title and status stay as the tool call's own updates set them)
      const tc = e.request.toolCall;
      if (tc?.toolCallId && !st.toolCalls[tc.toolCallId]) st = applyToolCall(st, tc, true);
      else if (tc?.toolCallId) st = applyToolCall(st, { toolCallId: tc.toolCallId, content: tc.content, locations: tc.locations, rawInput: tc.rawInput }, false);
      return push(st, { kind: "permission", requestId: e.requestId, id: `perm-${e.requestId}` });
    }
    case "permissionResolved": {
      const p = s.permissions[e.requestId];
      if (!p) return s;
      const st = { ...s, permissions: { ...s.permissions, [e.requestId]: { ...p, outcome: e.outcome } } };
      return bumpItem(st, (i) => i.kind === "permission" && i.requestId === e.requestId);
    }
    case "turnStarted":
      return { ...s, busy: true, lastStopReason: undefined, turnStart: s.items.length, costAtTurnStart: costNow(s), rev: s.rev + 1 };
    case "turnEnded": {
      let st: ChatState = { ...s, busy: false, lastStopReason: e.stopReason, turnStart: undefined, rev: s.rev + 1 };
      const files = turnChanges(turnToolCalls(s));
      if (files.length) st = push(st, { kind: "changes", files });
      // pending permission prompts of a finished turn are moot
      for (const [id, p] of Object.entries(st.permissions)) {
        if (p.outcome === undefined) st = reduce(st, { type: "permissionResolved", requestId: id, outcome: "cancelled" });
      }
      if (e.error) st = push(st, { kind: "notice", severity: "error", text: e.error });
      else if (e.stopReason && e.stopReason !== "end_turn") {
        const why: Record<string, string> = {
          cancelled: "Stopped.",
          max_tokens: "The model hit its output token limit.",
          max_turn_requests: "Stopped: too many model requests in one turn.",
          refusal: "The model refused to continue.",
        };
        st = push(st, { kind: "notice", severity: e.stopReason === "cancelled" ? "info" : "warning", text: why[e.stopReason] ?? `Stopped: ${e.stopReason}` });
      }
      return withTurnUsage(st, e.usage);
    }
    case "modeSet":
      return s.modes ? { ...s, modes: { ...s.modes, currentModeId: e.modeId }, rev: s.rev + 1 } : s;
    case "configOptions":
      return { ...s, configOptions: e.configOptions, rev: s.rev + 1 };
    case "notice":
      return push(s, { kind: "notice", severity: e.severity, text: e.text });
    case "turnUndone": {
      const rev = s.rev + 1;
      return { ...s, rev, items: s.items.map((i) => (i.kind === "changes" && i.id === e.itemId ? { ...i, undo: e.outcomes, rev } : i)) };
    }
  }
}

/**
 * The session's cost before a turn: the last one the server sent; none sent and nothing answered
 * yet (a new session): zero. A loaded session's cost is unknown until the server sends it.
 */
function costNow(s: ChatState): ChatState["costAtTurnStart"] {
  if (s.usage?.cost) return s.usage.cost;
  return s.items.some((i) => i.kind === "agent" || i.kind === "tool" || i.kind === "thought") ? undefined : { amount: 0 };
}

/** the ended turn's tokens and cost as an item under it, its tokens added to the session's */
function withTurnUsage(s: ChatState, usage: acp.Usage | null | undefined): ChatState {
  const tokens = usage ? { input: usage.inputTokens, output: usage.outputTokens, total: usage.totalTokens, ...(usage.cachedReadTokens ? { cachedRead: usage.cachedReadTokens } : {}) } : undefined;
  const spent = costSince(s.costAtTurnStart, s.usage?.cost);
  const cost = spent && spent.amount > 0 ? spent : undefined;
  let st: ChatState = { ...s, costAtTurnStart: undefined };
  if (tokens) st.sessionTokens = { input: (s.sessionTokens?.input ?? 0) + tokens.input, output: (s.sessionTokens?.output ?? 0) + tokens.output };
  if (tokens || cost) st = push(st, { kind: "usage", ...(tokens ? { tokens } : {}), ...(cost ? { cost } : {}) });
  return st;
}

/** what the chat's header shows of the session's tokens and cost */
export function sessionUsage(s: ChatState): SessionUsage {
  const last = s.items.filter((i) => i.kind === "usage").at(-1) as TurnUsage | undefined;
  return { context: s.usage && { used: s.usage.used, size: s.usage.size }, cost: s.usage?.cost, tokens: s.sessionTokens, last };
}

/** the tool calls shown since the running turn began */
function turnToolCalls(s: ChatState): ToolCallState[] {
  if (s.turnStart === undefined) return [];
  return s.items.slice(s.turnStart).flatMap((i) => (i.kind === "tool" && s.toolCalls[i.toolCallId] ? [s.toolCalls[i.toolCallId]!] : []));
}

/** All agent text of the state (tests, copy). */
export function agentText(s: ChatState): string {
  return s.items.filter((i) => i.kind === "agent").map((i) => (i as { text: string }).text).join("");
}

export function pendingPermissions(s: ChatState): PermissionState[] {
  return Object.values(s.permissions).filter((p) => p.outcome === undefined);
}
