import { test } from "node:test";
import assert from "node:assert/strict";
import { slashQuery, completeSlash, parseSlash, promptTextFor, enterCompletes } from "../src/core/slash.js";

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

test("completion ranking: shorter names first within a rank, then alphabetical; case does not matter", () => {
  const cmds = [
    { name: "zeta", description: "" },
    { name: "alpha", description: "" },
    { name: "al", description: "" },
    { name: "beta", description: "" },
  ];
  assert.deepEqual(completeSlash(cmds, "").map((s) => s.name), ["al", "beta", "zeta", "alpha"], "for '/' shorter names come first, ties alphabetical");
  assert.deepEqual(completeSlash(cmds, "AL").map((s) => s.name), ["al", "alpha"], "matching ignores case");
  assert.deepEqual(completeSlash([{ name: "/lead", description: "" }], "le").map((s) => [s.name, s.insertText]), [["lead", "/lead "]], "a command advertised with a leading / is offered once, without it");
  assert.deepEqual(completeSlash([{ name: "x", description: "", input: { hint: "h" } }, { name: "xy", description: "", input: null }], "x").map((s) => s.hint), ["h", undefined], "only commands with an input hint show one");
});

test("completion highlights: which letters of the name matched", () => {
  const cmds = [{ name: "review", description: "" }, { name: "pr-review", description: "" }, { name: "openviking:search", description: "" }];
  const m = (q: string) => Object.fromEntries(completeSlash(cmds, q).map((s) => [s.name, s.matches]));
  assert.deepEqual(m("rev"), { review: [0, 1, 2], "pr-review": [3, 4, 5] }, "a prefix or a substring highlights its letters");
  assert.deepEqual(m("OVS"), { "openviking:search": [0, 4, 11] }, "a fuzzy match highlights each letter where it was found");
  assert.deepEqual(m(""), { review: [], "pr-review": [], "openviking:search": [] }, "nothing typed, nothing highlighted");
});

test("slash command text", () => {
  assert.equal(slashQuery("/abc", 0), "", "the cursor before the word: an empty query");
  assert.equal(slashQuery("/ab\tc"), undefined, "any whitespace ends the command word");
  assert.deepEqual({ ...parseSlash("  /plan  a\nb  ", [{ name: "/plan", description: "d" }]), command: undefined }, { name: "plan", rest: "a\nb", known: true, command: undefined }, "a command's text may span lines; surrounding blanks are ignored; a command advertised with / is known");
  assert.deepEqual(parseSlash("/plan", []), { name: "plan", rest: "", known: false, command: undefined }, "a command without text has empty rest");
  assert.equal(parseSlash("/", []), undefined, "a lone / is not a command");
  assert.equal(parseSlash("/x", [{ name: "x", description: "d" }])?.command?.description, "d", "a known command carries the agent's entry");
  assert.equal(promptTextFor("/unknown thing"), "/unknown thing", "a message is sent as typed");
});

test("Enter completes only what completing changes: an exact command is sent as typed", () => {
  const first = (q: string) => completeSlash(CMDS, q)[0];
  assert.equal(enterCompletes("/rev", first("rev")), true, "a partly typed command is completed");
  assert.equal(enterCompletes("/review", first("review")), false, "a fully typed command is sent, not completed");
  assert.equal(enterCompletes("/review", completeSlash(CMDS, "review")[1]), true, "another suggestion picked with the arrows is taken");
  assert.equal(enterCompletes("/Review", first("Review")), true, "a command in other case is completed to the agent's spelling");
  assert.equal(enterCompletes("/review now", first("review")), false, "a command with text after it is sent");
  assert.equal(enterCompletes("/rev", undefined), false, "nothing to complete: sent");
  assert.equal(enterCompletes("hello", first("")), false, "not a command: sent");
});
