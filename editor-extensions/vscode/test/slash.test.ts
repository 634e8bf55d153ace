import { test } from "node:test";
import assert from "node:assert/strict";
import { slashQuery, completeSlash, parseSlash } from "../src/core/slash.js";

const CMDS = [
  { name: "review", description: "Review the current changes", input: { hint: "what to focus on" } },
  { name: "plan", description: "Write a plan" },
  { name: "openviking:search", description: "Search the knowledge base", input: { hint: "query" } },
  { name: "pr-review", description: "Review a pull request" },
];

test("slashQuery only at the start of the message, before any space", () => {
  assert.equal(slashQuery("/"), "");
  assert.equal(slashQuery("/pl"), "pl");
  assert.equal(slashQuery("/plan now"), undefined);
  assert.equal(slashQuery("/plan now", 3), "pl");
  assert.equal(slashQuery("hello /x"), undefined);
});

test("completion: everything for '/', prefix before substring before fuzzy, with hints", () => {
  assert.equal(completeSlash(CMDS, "").length, 4);
  const r = completeSlash(CMDS, "rev").map((s) => s.name);
  assert.deepEqual(r, ["review", "pr-review"]);
  const s = completeSlash(CMDS, "review")[0]!;
  assert.equal(s.hint, "what to focus on");
  assert.equal(s.insertText, "/review ");
  assert.equal(s.description, "Review the current changes");
  assert.deepEqual(completeSlash(CMDS, "ovs").map((x) => x.name), ["openviking:search"]);
  assert.deepEqual(completeSlash(CMDS, "zzz"), []);
});

test("live updates: completion follows whatever list it is given", () => {
  assert.deepEqual(completeSlash([], "p"), []);
  assert.equal(completeSlash([...CMDS, { name: "ping", description: "p" }], "pi")[0]!.name, "ping");
});

test("parseSlash: known and unknown commands", () => {
  assert.deepEqual({ ...parseSlash("/review  the parser", CMDS), command: undefined }, { name: "review", rest: "the parser", known: true, command: undefined });
  const u = parseSlash("/nope x", CMDS)!;
  assert.equal(u.known, false);
  assert.equal(parseSlash("not a command", CMDS), undefined);
});
