// What of a chat outlives a window reload: the session it shows and the messages queued in it.
// Kept in the chat webview's own state (VS Code saves it with the window and hands it back to the
// side bar view and to each restored editor tab), so it lives exactly as long as the chat does.
// What comes back is checked here: it is data from an older run, maybe an older version. No
// `vscode` import.
import type { Attachment } from "./attachments.js";
import type { QueuedPrompt } from "./promptQueue.js";

export interface PersistedChat {
  /** the chat's folder (a URI), for windows with several */
  folder?: string | undefined;
  /** the session shown, reopened with session/load */
  sessionId?: string | undefined;
  /** messages that were waiting; they come back queued, sent only by the user */
  queue: { text: string; attachments: Attachment[] }[];
}

export function persistedChat(sessionId: string | undefined, queue: readonly QueuedPrompt[], folder?: string): PersistedChat {
  return {
    ...(folder ? { folder } : {}),
    ...(sessionId ? { sessionId } : {}),
    queue: queue.map((q) => ({ text: q.text, attachments: q.attachments })),
  };
}

/** whether there is anything to bring back */
export function worthRestoring(p: PersistedChat | undefined): p is PersistedChat {
  return !!p && (!!p.sessionId || p.queue.length > 0);
}

const str = (x: unknown): x is string => typeof x === "string";

function attachment(x: unknown): Attachment | undefined {
  if (!x || typeof x !== "object") return undefined;
  const a = x as Record<string, unknown>;
  if (!str(a.id) || !str(a.name)) return undefined;
  if (a.kind === "file" && str(a.path)) return { kind: "file", id: a.id, name: a.name, path: a.path };
  if (a.kind === "image" && str(a.mimeType) && str(a.data)) return { kind: "image", id: a.id, name: a.name, mimeType: a.mimeType, data: a.data };
  return undefined;
}

/** a persisted chat from a webview's saved state; undefined when it is not one. Bad entries are left out. */
export function parsePersistedChat(x: unknown): PersistedChat | undefined {
  if (!x || typeof x !== "object" || Array.isArray(x)) return undefined;
  const o = x as Record<string, unknown>;
  const queue: PersistedChat["queue"] = [];
  for (const q of Array.isArray(o.queue) ? o.queue : []) {
    if (!q || typeof q !== "object" || !str((q as { text?: unknown }).text)) continue;
    const raw = (q as { attachments?: unknown }).attachments;
    const attachments = (Array.isArray(raw) ? raw : []).map(attachment).filter((a): a is Attachment => !!a);
    queue.push({ text: (q as { text: string }).text, attachments });
  }
  return {
    ...(str(o.folder) && o.folder ? { folder: o.folder } : {}),
    ...(str(o.sessionId) && o.sessionId ? { sessionId: o.sessionId } : {}),
    queue,
  };
}
