// Edges of the usage and cost text (src/core/usage.ts) and of slash completion (src/core/slash.ts)
// that the mutation run (Stryker, 2026-12-07) found unguarded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatCost, sessionUsageText } from "../src/core/usage.js";
import { completeSlash, parseSlash } from "../src/core/slash.js";
import { initialChatState, reduce, type ChatEvent } from "../src/core/chatState.js";

test("a currency that is not exactly three capitals follows the amount (Intl would refuse it as a code)", () => {
  assert.equal(formatCost({ amount: 2, currency: "EURO" }), "2.00 EURO", "promise: only an ISO 4217 code is formatted as a currency");
  assert.equal(formatCost({ amount: 0.5, currency: "xUSD" }), "0.50 xUSD");
});

test("a context without a known window: the tooltip gives the tokens, no share of a zero size", () => {
  const shown = sessionUsageText({ context: { used: 500, size: 0 } });
  assert.deepEqual(shown, { text: "500 tokens", title: "Context: 500 tokens" }, "promise: no 'of 0 (NaN %)'");
});

test("the header's tooltip names the last turn when it had tokens or a cost, and only then", () => {
  const context = { used: 1000, size: 2000 };
  const tokensOnly = sessionUsageText({ context, last: { tokens: { input: 2, output: 1, total: 3 } } });
  assert.match(tokensOnly!.title, /Last turn: 3 tokens \(2 in, 1 out\)/, "promise: a turn with tokens and no cost is named");
  const costOnly = sessionUsageText({ context, last: { cost: { amount: 0.5, currency: "USD" } } });
  assert.match(costOnly!.title, /Last turn: \$0\.50/, "promise: a turn with a cost and no tokens is named");
  assert.doesNotMatch(sessionUsageText({ context, last: {} })!.title, /Last turn/, "an empty last turn is not named");
  assert.doesNotMatch(sessionUsageText({ context })!.title, /Last turn/, "no last turn yet: not named");
});

test("a prefix match ranks before a shorter substring match", () => {
  const cmds = [{ name: "prev", description: "" }, { name: "reviewer", description: "" }];
  assert.deepEqual(completeSlash(cmds, "rev").map((s) => s.name), ["reviewer", "prev"], "promise: prefix matches first, then substring");
});

test("only the leading slash of a command's name is dropped, and a command must start the text", () => {
  const cmds = [{ name: "git/commit", description: "" }];
  assert.equal(completeSlash(cmds, "git")[0]!.name, "git/commit");
  assert.equal(parseSlash("/git/commit now", cmds)?.known, true, "promise: a command whose name has a slash is known");
  assert.equal(parseSlash("see /git/commit", cmds), undefined, "promise: text that does not start with / is not a command");
});

test("a loaded session whose history is only a tool call or only a thought: its first turn's cost is unknown too", () => {
  const turnThenCost: ChatEvent[] = [
    { type: "userPrompt", text: "q" },
    { type: "turnStarted" },
    { type: "update", update: { sessionUpdate: "usage_update", used: 100, size: 1000, cost: { amount: 3, currency: "USD" } } },
    { type: "turnEnded", stopReason: "end_turn", usage: { inputTokens: 90, outputTokens: 10, totalTokens: 100 } },
  ];
  const histories: Record<string, ChatEvent> = {
    tool: { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "old", title: "Read a.txt", kind: "read", status: "completed" } },
    thought: { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "old thought" } } },
  };
  for (const [kind, replayed] of Object.entries(histories)) {
    const s = [replayed, ...turnThenCost].reduce(reduce, initialChatState());
    const usage = s.items.filter((i) => i.kind === "usage") as { cost?: unknown }[];
    assert.equal(usage.length, 1, kind);
    assert.equal(usage[0]!.cost, undefined, `promise: after a replayed ${kind} the session's cost before the turn is unknown, so the turn shows no cost (not the whole session's)`);
  }
});
