// Slash command completion from `available_commands_update`. No `vscode` import.
// Typing `/` at the start of the message offers the agent's commands (name, description, hint);
// the list is whatever the agent sent last. A message is always sent as text: a known command as
// "/name rest", an unknown one unchanged (the agent decides what it means).
import type * as acp from "@agentclientprotocol/sdk/unstable";

export interface SlashSuggestion {
  name: string;
  description: string;
  hint?: string | undefined;
  /** text that replaces the input when the suggestion is accepted */
  insertText: string;
  /** indices into `name` that matched the query (for highlighting) */
  matches: number[];
}

/**
 * The command query being typed, if the cursor is inside a leading "/word":
 * "/pl|" -> "pl", "/|" -> "", "hello /x" -> undefined, "/plan some|" -> undefined.
 */
export function slashQuery(text: string, cursor: number = text.length): string | undefined {
  if (!text.startsWith("/")) return undefined;
  const head = text.slice(1, cursor);
  if (/\s/.test(head)) return undefined;
  return head;
}

function subsequence(name: string, q: string): number[] | undefined {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < name.length && j < q.length; i++) {
    if (name[i]!.toLowerCase() === q[j]!.toLowerCase()) {
      out.push(i);
      j++;
    }
  }
  return j === q.length ? out : undefined;
}

/** Ranks commands for `query`: prefix matches first, then substring, then subsequence (fuzzy). */
export function completeSlash(commands: readonly acp.AvailableCommand[], query: string): SlashSuggestion[] {
  const q = query.toLowerCase();
  const scored: { s: SlashSuggestion; score: number }[] = [];
  for (const c of commands) {
    const name = c.name.replace(/^\//, "");
    const lower = name.toLowerCase();
    let score: number;
    let matches: number[];
    if (lower.startsWith(q)) {
      score = 0;
      matches = [...Array(q.length).keys()];
    } else if (lower.includes(q)) {
      score = 1;
      const at = lower.indexOf(q);
      matches = [...Array(q.length).keys()].map((k) => k + at);
    } else {
      const sub = subsequence(name, q);
      if (!sub) continue;
      score = 2;
      matches = sub;
    }
    const hint = c.input && "hint" in c.input ? c.input.hint : undefined;
    scored.push({ s: { name, description: c.description, hint, insertText: `/${name} `, matches }, score });
  }
  scored.sort((a, b) => a.score - b.score || a.s.name.length - b.s.name.length || a.s.name.localeCompare(b.s.name));
  return scored.map((x) => x.s);
}

/**
 * Whether Enter takes `suggestion` instead of sending: only when taking it changes the command word
 * ("/rev" -> "/review "). A fully typed command ("/review") is sent as typed; Tab still completes.
 */
export function enterCompletes(text: string, suggestion: SlashSuggestion | undefined): boolean {
  const q = slashQuery(text);
  return q !== undefined && suggestion !== undefined && suggestion.name !== q;
}

export interface ParsedSlash {
  name: string;
  rest: string;
  /** the agent advertised this command */
  known: boolean;
  command?: acp.AvailableCommand | undefined;
}

/** "/name rest" -> { name, rest, known }; undefined when the text is not a slash command. */
export function parseSlash(text: string, commands: readonly acp.AvailableCommand[]): ParsedSlash | undefined {
  const m = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const name = m[1]!;
  const command = commands.find((c) => c.name.replace(/^\//, "") === name);
  return { name, rest: m[2] ?? "", known: !!command, command };
}

/** The prompt text actually sent: always the user's text (unknown commands go through unchanged). */
export function promptTextFor(text: string): string {
  return text;
}
