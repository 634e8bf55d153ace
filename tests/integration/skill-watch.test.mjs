// Skills follow their files in a running server, as in Claude Code: a SKILL.md edited, saved
// atomically, broken or renamed, a skill folder added or removed, a skill place made after the
// start — each changes the slash commands (and what the model is told) without `serve reload`.
// An edit in place is read alone (the log says so), not by a whole reload.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, waitUntil } from "./harness.mjs";

function skillText(name, description) {
  return `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\nSteps for ${name}.\n`;
}

function skill(dir, name, description) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "SKILL.md"), skillText(name, description));
}

function commandsOf(h, sessionId) {
  const updates = h.updatesOf(sessionId, "available_commands_update");
  return updates.length ? updates.at(-1).availableCommands : [];
}

function described(h, sessionId, name) {
  return commandsOf(h, sessionId).find((c) => c.name === name)?.description;
}

const reloadsInPlace = (h) => (h.stderr.match(/skills reloaded: \d+ SKILL\.md file\(s\) read again/g) ?? []).length;
const wholeReloads = (h) => (h.stderr.match(/configuration reloaded:/g) ?? []).length;

scenario("skills follow their files: edited, saved atomically, broken, renamed, added, removed, in a place made later", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "ok" }]);
  const ws = ctx.workspace({ "README.md": "x\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  const alpha = path.join(home.configDir, "skills/alpha");
  skill(alpha, "alpha", "First words");
  skill(path.join(home.homeDir, ".claude/skills/beta"), "beta", "From ~/.claude");
  // ~/.agents/skills does not exist yet.

  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => described(h, sessionId, "alpha") === "First words", { label: "the first slash commands" });
  // The watches are added after the load (an edit before them would be missed).
  await waitUntil(() => /skills: watching \d+ folders/.test(h.stderr), { label: "the skill folders watched" });

  // Edited in place (open, truncate, write, close).
  const wait = (label, pred) => waitUntil(pred, { label, timeout: 5000 });
  fs.writeFileSync(path.join(alpha, "SKILL.md"), skillText("alpha", "Second words"));
  await wait("an edited SKILL.md changes its slash command without serve reload", () => described(h, sessionId, "alpha") === "Second words");
  assert.ok(reloadsInPlace(h) >= 1, `an edited SKILL.md is read again alone, not by a whole reload; stderr:\n${h.stderr.slice(-2000)}`);
  assert.equal(wholeReloads(h), 0, "no whole reload for an edit in place");

  // Saved atomically (a temporary file renamed over SKILL.md), as editors do.
  fs.writeFileSync(path.join(alpha, ".SKILL.md.tmp"), skillText("alpha", "Third words"));
  fs.renameSync(path.join(alpha, ".SKILL.md.tmp"), path.join(alpha, "SKILL.md"));
  await wait("a SKILL.md saved atomically changes its slash command", () => described(h, sessionId, "alpha") === "Third words");

  // Broken: the command goes; fixed: it comes back.
  fs.writeFileSync(path.join(alpha, "SKILL.md"), "no frontmatter here\n");
  await wait("a SKILL.md that no longer loads takes its command away", () =>
    commandsOf(h, sessionId).length > 0 && described(h, sessionId, "alpha") === undefined);
  assert.match(h.stderr, /alpha\/SKILL\.md:1: SKILL\.md must start with YAML frontmatter/, "the problem is logged with file:line");
  fs.writeFileSync(path.join(alpha, "SKILL.md"), skillText("alpha", "Fixed words"));
  await wait("a fixed SKILL.md brings its command back", () => described(h, sessionId, "alpha") === "Fixed words");

  // Renamed in its frontmatter.
  fs.writeFileSync(path.join(alpha, "SKILL.md"), skillText("alpha-two", "Renamed"));
  await wait("a renamed skill is offered under its new name only", () =>
    described(h, sessionId, "alpha-two") === "Renamed" && described(h, sessionId, "alpha") === undefined);
  assert.equal(wholeReloads(h), 0, "edits in place never need a whole reload");

  // A new skill folder, and one removed.
  skill(path.join(home.configDir, "skills/group/gamma"), "gamma", "Added while running");
  await wait("a new skill folder adds its command", () => described(h, sessionId, "gamma") === "Added while running");
  fs.rmSync(path.join(home.homeDir, ".claude/skills/beta"), { recursive: true });
  await wait("a removed skill folder takes its command away", () => described(h, sessionId, "beta") === undefined);
  // A skill in the new group folder: watched since the reload that found it.
  skill(path.join(home.configDir, "skills/group/gamma"), "gamma", "Edited in the new folder");
  await wait("a skill found by a reload is watched too", () => described(h, sessionId, "gamma") === "Edited in the new folder");

  // A place that did not exist at the start.
  skill(path.join(home.homeDir, ".agents/skills/delta"), "delta", "In a place made later");
  await wait("a skill place made after the start is found", () => described(h, sessionId, "delta") === "In a place made later");

  // The model is told the skills as they are now.
  assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn");
  const sent = JSON.stringify(fake.requests[0].body.messages);
  assert.match(sent, /alpha-two/);
  assert.match(sent, /Edited in the new folder/);
  assert.match(sent, /In a place made later/);
  assert.doesNotMatch(sent, /From ~\/.claude/, "a removed skill is no longer offered to the model");
  h.assertSchemaClean();
});
