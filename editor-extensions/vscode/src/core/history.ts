// The History list: stored sessions as a user wants to see them — named by their title, newest
// first, with a readable time; sessions nobody ever wrote in (no title) are left out. No `vscode` import.
import type { SessionInfo } from "@agentclientprotocol/sdk/unstable";

export interface HistoryEntry {
  sessionId: string;
  title: string;
  /** "just now", "5 min ago", "3 h ago", "yesterday", or a date */
  when: string;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export function relativeTime(iso: string | null | undefined, now: Date): string {
  if (!iso) return "";
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return "";
  const ago = now.getTime() - t.getTime();
  if (ago < MINUTE) return "just now";
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  if (t.getTime() >= startOfToday) return `${Math.floor(ago / HOUR)} h ago`;
  if (t.getTime() >= startOfToday - 24 * HOUR) return "yesterday";
  const sameYear = t.getFullYear() === now.getFullYear();
  return t.toLocaleDateString(undefined, sameYear ? { month: "short", day: "numeric" } : { year: "numeric", month: "short", day: "numeric" });
}

export function historyEntries(sessions: readonly SessionInfo[], now: Date, currentSessionId?: string): HistoryEntry[] {
  return sessions
    .filter((s) => (s.title ?? "").trim() !== "" && s.sessionId !== currentSessionId)
    .slice()
    .sort((a, b) => (b.updatedAt ?? "").localeCompare(a.updatedAt ?? ""))
    .map((s) => ({ sessionId: s.sessionId, title: s.title!.trim(), when: relativeTime(s.updatedAt, now) }));
}
