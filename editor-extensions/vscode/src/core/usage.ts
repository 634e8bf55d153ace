// Tokens and cost as the chat shows them: the context and the session's cost in the chat's header,
// each turn's tokens and cost under the turn. The server sends the context and the session's
// cumulative cost in `usage_update`, and a turn's tokens in the prompt's answer (`usage`); a turn's
// cost is what the session's cost grew by during it. No `vscode` import.
import type * as acp from "@agentclientprotocol/sdk/unstable";

/** a turn's tokens and cost, as shown under it */
export interface TurnUsage {
  tokens?: { input: number; output: number; total: number; cachedRead?: number | undefined } | undefined;
  cost?: acp.Cost | undefined;
}

/** 950 -> "950", 12_345 -> "12.3k", 200_000 -> "200k", 1_234_567 -> "1.2M" (three digits at most) */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  const [value, unit] = n < 999_500 ? [n / 1000, "k"] : [n / 1_000_000, "M"];
  return `${Number(value.toFixed(value < 100 ? 1 : 0))}${unit}`;
}

/**
 * Money to the cent from 1 up, below that to 4 significant digits (at least to the cent), so that
 * 1.7999999999999998 USD reads "$1.80" and 0.0123456 reads "$0.01235". A currency that is not an
 * ISO 4217 code ("credits") follows the amount.
 */
export function formatCost(c: acp.Cost): string {
  const small = Math.abs(c.amount) < 1;
  const amount = small ? Number(c.amount.toPrecision(4)) : c.amount;
  const digits = { minimumFractionDigits: 2, maximumFractionDigits: small ? 20 : 2 };
  // any three capitals are a well-formed ISO 4217 code to Intl (an unknown one is written as given)
  if (/^[A-Z]{3}$/.test(c.currency)) return new Intl.NumberFormat("en-US", { style: "currency", currency: c.currency, ...digits }).format(amount);
  return `${new Intl.NumberFormat("en-US", digits).format(amount)} ${c.currency}`;
}

/** "12.3k tokens (12.1k in, 210 out) · $0.0021" */
export function turnUsageText(u: TurnUsage): string {
  const parts: string[] = [];
  if (u.tokens) parts.push(`${formatTokens(u.tokens.total)} tokens (${formatTokens(u.tokens.input)} in, ${formatTokens(u.tokens.output)} out)`);
  if (u.cost) parts.push(formatCost(u.cost));
  return parts.join(" · ");
}

/** What the session's cost grew by from `before` to `after`; unknown when either is, or the currency changed. */
export function costSince(before: { amount: number; currency?: string | undefined } | undefined, after: acp.Cost | undefined): acp.Cost | undefined {
  if (!before || !after) return undefined;
  if (before.currency !== undefined && before.currency !== after.currency) return undefined;
  return { amount: after.amount - before.amount, currency: after.currency };
}

/** the session's figures the header shows */
export interface SessionUsage {
  /** tokens in the context and the model's context window (usage_update) */
  context?: { used: number; size: number } | undefined;
  /** the session's cost so far */
  cost?: acp.Cost | undefined;
  /** the tokens of this chat's turns, added up (a loaded session's earlier turns are not counted) */
  tokens?: { input: number; output: number } | undefined;
  last?: TurnUsage | undefined;
}

/** The header's line ("12.3k / 200k tokens · $0.0123 this session") and its tooltip; undefined: nothing known yet. */
export function sessionUsageText(s: SessionUsage): { text: string; title: string } | undefined {
  const text: string[] = [];
  const title: string[] = [];
  const { context, cost, tokens } = s;
  if (context) {
    text.push(context.size > 0 ? `${formatTokens(context.used)} / ${formatTokens(context.size)} tokens` : `${formatTokens(context.used)} tokens`);
    const share = context.size > 0 ? ` of ${context.size.toLocaleString("en-US")} (${Math.round((100 * context.used) / context.size)} %)` : "";
    title.push(`Context: ${context.used.toLocaleString("en-US")} tokens${share}`);
  } else if (tokens) text.push(`${formatTokens(tokens.input + tokens.output)} tokens`);
  if (tokens) title.push(`Turns in this chat: ${tokens.input.toLocaleString("en-US")} tokens in, ${tokens.output.toLocaleString("en-US")} out`);
  if (cost) {
    text.push(`${formatCost(cost)} this session`);
    title.push(`Cost this session: ${formatCost(cost)}`);
  }
  if (s.last && (s.last.tokens || s.last.cost)) title.push(`Last turn: ${turnUsageText(s.last)}`);
  return text.length ? { text: text.join(" · "), title: title.join("\n") } : undefined;
}
