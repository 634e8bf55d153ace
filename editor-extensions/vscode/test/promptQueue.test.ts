// Messages queued while a turn runs (src/core/promptQueue.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { PromptQueue, sendsQueued } from "../src/core/promptQueue.js";

test("queued messages keep their order and text, each with its own id", () => {
  const q = new PromptQueue();
  const a = q.add("first");
  const b = q.add("second", [{ kind: "file", id: "f", path: "/w/a", name: "a" }]);
  assert.notEqual(a.id, b.id, "ids are unique");
  assert.deepEqual(q.list.map((i) => i.text), ["first", "second"], "in the order typed");
  assert.deepEqual(q.list[1]!.attachments.map((x) => x.name), ["a"], "attachments stay with their message");
  assert.deepEqual(a.attachments, [], "no attachments: an empty list");
});

test("a queued message can be removed; removing an unknown id changes nothing", () => {
  const q = new PromptQueue();
  const a = q.add("first");
  q.add("second");
  assert.equal(q.remove("nope"), undefined, "unknown id: nothing removed");
  assert.equal(q.list.length, 2, "the queue is unchanged by an unknown id");
  assert.equal(q.remove(a.id)?.text, "first", "the removed message is returned (to send now or edit)");
  assert.deepEqual(q.list.map((i) => i.text), ["second"], "the rest stays queued");
  q.clear();
  assert.deepEqual(q.list, [], "clear empties the queue");
});

test("after a turn that ended by itself the first queued message is sent, one at a time", () => {
  const q = new PromptQueue();
  q.add("first");
  q.add("second");
  assert.equal(q.next({ stopReason: "end_turn" })?.text, "first", "the oldest message goes first");
  assert.deepEqual(q.list.map((i) => i.text), ["second"], "and only that one leaves the queue");
  assert.equal(q.next({ stopReason: "max_tokens" })?.text, "second", "any stop reason but cancelled goes on");
  assert.equal(q.next({ stopReason: "end_turn" }), undefined, "an empty queue sends nothing");
});

test("after Stop or an error nothing is sent and the queue stays for the user", () => {
  const q = new PromptQueue();
  q.add("keep me");
  assert.equal(q.next({ stopReason: "cancelled" }), undefined, "a turn stopped by the user sends nothing");
  assert.equal(q.next({ error: true }), undefined, "a failed turn sends nothing");
  assert.equal(q.next({}), undefined, "a turn without a stop reason (never answered) sends nothing");
  assert.deepEqual(q.list.map((i) => i.text), ["keep me"], "the message is still queued");
  assert.equal(sendsQueued({ stopReason: "end_turn", error: true }), false, "an error wins over a stop reason");
  assert.equal(sendsQueued({ stopReason: "refusal" }), true, "a refusal still ends the turn normally");
});
