// Tokens and cost: how they are written (src/core/usage.ts) and what the chat state keeps of them
// per turn and per session (src/core/chatState.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { formatCost, formatTokens, sessionUsageText, turnUsageText, costSince } from "../src/core/usage.js";
import { initialChatState, reduce, sessionUsage, type ChatEvent, type ChatState } from "../src/core/chatState.js";

const run = (events: ChatEvent[], from: ChatState = initialChatState()) => events.reduce(reduce, from);
const usd = (amount: number) => ({ amount, currency: "USD" });
const usageUpdate = (used: number, size: number, cost?: { amount: number; currency: string }): ChatEvent => ({ type: "update", update: { sessionUpdate: "usage_update", used, size, ...(cost ? { cost } : {}) } });
const turn = (events: ChatEvent[], usage?: { inputTokens: number; outputTokens: number; totalTokens: number; cachedReadTokens?: number }): ChatEvent[] => [
  { type: "userPrompt", text: "q" },
  { type: "turnStarted" },
  { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } } },
  ...events,
  { type: "turnEnded", stopReason: "end_turn", ...(usage ? { usage } : {}) },
];
const turnItems = (s: ChatState) => s.items.filter((i) => i.kind === "usage").map((i) => turnUsageText(i as never));

test("token counts: exact below a thousand, then k and M with at most three digits", () => {
  assert.equal(formatTokens(0), "0");
  assert.equal(formatTokens(999), "999");
  assert.equal(formatTokens(1000), "1k");
  assert.equal(formatTokens(1234), "1.2k");
  assert.equal(formatTokens(12_345), "12.3k");
  assert.equal(formatTokens(99_960), "100k", "99.96k rounds to 100k, not 100.0k");
  assert.equal(formatTokens(123_456), "123k");
  assert.equal(formatTokens(200_000), "200k");
  assert.equal(formatTokens(999_499), "999k");
  assert.equal(formatTokens(999_500), "1M", "never 1000k");
  assert.equal(formatTokens(1_234_567), "1.2M");
  assert.equal(formatTokens(123_456_789), "123M");
});

test("costs: to the cent from 1 up, else 4 significant digits; never a float's tail", () => {
  assert.equal(formatCost(usd(1.7999999999999998)), "$1.80");
  assert.equal(formatCost(usd(0.1 + 0.2)), "$0.30");
  assert.equal(formatCost(usd(0.0123)), "$0.0123");
  assert.equal(formatCost(usd(0.012345678)), "$0.01235");
  assert.equal(formatCost(usd(0.5)), "$0.50", "at least to the cent");
  assert.equal(formatCost(usd(0.0062000000000000006)), "$0.0062");
  assert.equal(formatCost(usd(0)), "$0.00");
  assert.equal(formatCost(usd(1)), "$1.00");
  assert.equal(formatCost(usd(12345.678)), "$12,345.68");
  assert.equal(formatCost({ amount: 2.5, currency: "EUR" }), "€2.50", "an ISO currency is written as a currency");
  assert.equal(formatCost({ amount: 3, currency: "credits" }), "3.00 credits", "another unit follows the amount");
  assert.equal(formatCost({ amount: 0.00012346, currency: "credits" }), "0.0001235 credits");
  assert.match(formatCost({ amount: 1, currency: "XYZ" }), /^XYZ\s1\.00$/, "an unknown three-letter code is kept as Intl writes it");
});

test("a turn's line: tokens in and out, and its cost", () => {
  assert.equal(turnUsageText({ tokens: { input: 12_100, output: 210, total: 12_310 }, cost: usd(0.0021) }), "12.3k tokens (12.1k in, 210 out) · $0.0021");
  assert.equal(turnUsageText({ tokens: { input: 5, output: 7, total: 12 } }), "12 tokens (5 in, 7 out)");
  assert.equal(turnUsageText({ cost: usd(0.25) }), "$0.25");
});

test("what a session's cost grew by: unknown without both figures or across currencies", () => {
  assert.deepEqual(costSince({ amount: 0 }, usd(0.5)), usd(0.5), "a new session starts at zero of any currency");
  assert.deepEqual(costSince(usd(0.25), usd(0.75)), usd(0.5));
  assert.equal(costSince(undefined, usd(1)), undefined);
  assert.equal(costSince(usd(1), undefined), undefined);
  assert.equal(costSince({ amount: 1, currency: "EUR" }, usd(2)), undefined);
});

test("the header: context of the window and the session's cost; details in its tooltip", () => {
  assert.equal(sessionUsageText({}), undefined, "nothing known: no line");
  const h = sessionUsageText({ context: { used: 12_345, size: 200_000 }, cost: usd(0.0123), tokens: { input: 30_000, output: 1_500 }, last: { tokens: { input: 12_000, output: 345, total: 12_345 }, cost: usd(0.0061) } })!;
  assert.equal(h.text, "12.3k / 200k tokens · $0.0123 this session");
  assert.equal(h.title, "Context: 12,345 tokens of 200,000 (6 %)\nTurns in this chat: 30,000 tokens in, 1,500 out\nCost this session: $0.0123\nLast turn: 12.3k tokens (12k in, 345 out) · $0.0061");
  assert.equal(sessionUsageText({ context: { used: 500, size: 0 } })!.text, "500 tokens", "no window size: the context alone");
  assert.equal(sessionUsageText({ tokens: { input: 1000, output: 234 } })!.text, "1.2k tokens", "no context figures: the tokens of the chat's turns");
  assert.equal(sessionUsageText({ cost: usd(1.7999999999999998) })!.text, "$1.80 this session");
});

test("chat state: each turn's tokens (the prompt's answer) and cost (what the session's cost grew by) under it; the session's added up", () => {
  let s = run([...turn([usageUpdate(1000, 200_000, usd(0.0061))], { inputTokens: 900, outputTokens: 100, totalTokens: 1000 })]);
  assert.deepEqual(s.usage, { used: 1000, size: 200_000, cost: usd(0.0061) }, "usage_update keeps the context and the session's cost");
  assert.deepEqual(turnItems(s), ["1k tokens (900 in, 100 out) · $0.0061"], "the first turn of a new session cost all the session's cost");
  assert.equal(s.items.at(-1)!.kind, "usage", "the line ends the turn");
  s = run(turn([usageUpdate(2500, 200_000, usd(0.0123))], { inputTokens: 2000, outputTokens: 500, totalTokens: 2500, cachedReadTokens: 800 }), s);
  assert.deepEqual(turnItems(s), ["1k tokens (900 in, 100 out) · $0.0061", "2.5k tokens (2k in, 500 out) · $0.0062"], "a later turn: the growth, rounded");
  assert.deepEqual(s.sessionTokens, { input: 2900, output: 600 }, "the session's tokens added up");
  assert.equal((s.items.at(-1) as { tokens?: { cachedRead?: number } }).tokens?.cachedRead, 800, "cached tokens are kept");
  assert.equal(s.costAtTurnStart, undefined, "nothing of the turn is left once it ended");
  const u = sessionUsage(s);
  assert.deepEqual(u.context, { used: 2500, size: 200_000 });
  assert.deepEqual(u.cost, usd(0.0123));
  assert.equal(turnUsageText(u.last!), "2.5k tokens (2k in, 500 out) · $0.0062", "the last turn for the header's tooltip");
  s = run(turn([], { inputTokens: 10, outputTokens: 1, totalTokens: 11 }), s);
  assert.deepEqual(turnItems(s).at(-1), "11 tokens (10 in, 1 out)", "a turn the session's cost did not grow in shows no cost");
  s = run(turn([]), s);
  assert.equal(turnItems(s).length, 3, "a turn with neither tokens nor cost has no line");
  assert.equal(run([{ type: "reset" }], s).usage, undefined, "a new chat starts with no usage");
});

test("chat state: a loaded session's cost before its first turn is unknown, so that turn shows tokens only", () => {
  // history replayed by session/load, then a turn: the cost the server then sends is the whole session's
  const replayed: ChatEvent[] = [
    { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "old" } } },
    { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "old answer" } } },
  ];
  let s = run([...replayed, ...turn([usageUpdate(100, 1000, usd(3))], { inputTokens: 90, outputTokens: 10, totalTokens: 100 })]);
  assert.deepEqual(turnItems(s), ["100 tokens (90 in, 10 out)"], "no cost for the turn: the session's cost before it is unknown");
  s = run(turn([usageUpdate(200, 1000, usd(3.5))]), s);
  assert.deepEqual(turnItems(s).at(-1), "$0.50", "known from then on");
  s = run(turn([usageUpdate(300, 1000, { amount: 9, currency: "EUR" })]), s);
  assert.equal(turnItems(s).length, 2, "a cost in another currency: no growth to show");
  assert.deepEqual(run(turn([usageUpdate(1, 2)])).usage, { used: 1, size: 2 }, "no cost sent: none kept");
});
