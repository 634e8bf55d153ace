import { test } from "node:test";
import assert from "node:assert/strict";
import { historyEntries, relativeTime } from "../src/core/history.js";

const now = new Date(2026, 5, 15, 12, 0, 0);
const at = (ms: number) => new Date(now.getTime() - ms).toISOString();

test("history times read like a person would say them", () => {
  assert.equal(relativeTime(at(10_000), now), "just now");
  assert.equal(relativeTime(at(12 * 60_000), now), "12 min ago");
  assert.equal(relativeTime(at(3 * 3600_000), now), "3 h ago");
  assert.equal(relativeTime(new Date(2026, 5, 14, 9, 0).toISOString(), now), "yesterday");
  assert.doesNotMatch(relativeTime(new Date(2026, 0, 3).toISOString(), now), /2026|T/, "this year: month and day only");
  assert.match(relativeTime(new Date(2024, 0, 3).toISOString(), now), /2024/, "another year: with the year");
  assert.equal(relativeTime(undefined, now), "");
  assert.equal(relativeTime("garbage", now), "", "an unreadable time is left out, not shown raw");
});

test("the history leaves out untitled (empty) sessions and the open one, newest first", () => {
  const list = historyEntries(
    [
      { sessionId: "a", cwd: "/w", title: "Old", updatedAt: at(5 * 3600_000) },
      { sessionId: "b", cwd: "/w", title: "  ", updatedAt: at(1000) },
      { sessionId: "c", cwd: "/w", updatedAt: at(1000) },
      { sessionId: "d", cwd: "/w", title: "New", updatedAt: at(60_000) },
      { sessionId: "e", cwd: "/w", title: "Open now", updatedAt: at(0) },
    ],
    now,
    "e",
  );
  assert.deepEqual(list.map((e) => e.sessionId), ["d", "a"]);
  assert.deepEqual(list.map((e) => e.when), ["1 min ago", "5 h ago"]);
});
