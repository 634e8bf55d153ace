// Hooks through ACP with the fake model: real hook scripts run by the agent loop.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, sleep, toolResults, userText, waitUntil, withTimeout, alive } from "./harness.mjs";

function writeHooks(configDir, files) {
  const dir = path.join(configDir, "hooks");
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    if (text.startsWith("#!")) fs.chmodSync(p, 0o755);
  }
}

/** Starts the agent only after the hooks exist (they load at start-up). */
async function setupWithHooks(ctx, { script, files = {}, hooks }) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace(files);
  const home = ctx.configHome({ modelUrl: fake.url });
  writeHooks(home.configDir, hooks);
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  return { fake, ws, home, h };
}

scenario("PreToolUse hook denies bash: the command never runs, the model gets the reason", async (ctx) => {
  const marker = `ran-${process.pid}-${Date.now()}`;
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [
      { toolCalls: [{ id: "call_rm", name: "bash", arguments: { command: `touch ${marker}` } }] },
      { text: "Understood, I will not run it." },
    ],
    hooks: {
      "guard.yaml": "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          script: guard.sh\n",
      "guard.sh": "#!/bin/sh\necho 'commands are not allowed here' >&2\nexit 2\n",
    },
  });
  const { sessionId } = await h.newSession(ws);
  const res = await h.prompt(sessionId, "make a file");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(fs.existsSync(path.join(ws, marker)), false, "the blocked command must not run");
  assert.equal(h.requestsOf("session/request_permission").length, 0, "no permission asked for a blocked call");
  const updates = h.updatesOf(sessionId).filter((u) => u.toolCallId === "call_rm" && u.sessionUpdate === "tool_call_update");
  const final = updates.at(-1);
  assert.equal(final.status, "failed");
  assert.match(JSON.stringify(final.content), /Blocked by a PreToolUse hook.*commands are not allowed here/);
  const results = toolResults(fake.requests[1]);
  assert.equal(results.length, 1);
  assert.match(results[0].content, /commands are not allowed here/);
  h.assertSchemaClean();
});

scenario("PreToolUse hook rewrites apply_patch input: the rewritten patch is applied and shown", async (ctx) => {
  const original = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch";
  const rewritten = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+rewritten by hook\n*** End Patch";
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [{ toolCalls: [{ id: "call_p", name: "apply_patch", arguments: { patch: original } }] }, { text: "ok" }],
    files: { "a.txt": "one\n" },
    hooks: {
      "rewrite.yaml": "hooks:\n  PreToolUse:\n    - matcher: Edit|Write\n      hooks:\n        - type: command\n          script: rewrite.sh\n",
      "rewrite.sh":
        "#!/bin/sh\ncat >/dev/null\nprintf '%s' " +
        `'${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { patch: rewritten } } })}'\n`,
    },
  });
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "edit")).stopReason, "end_turn");
  assert.equal(fs.readFileSync(path.join(ws, "a.txt"), "utf8"), "rewritten by hook\n");
  const updates = h.updatesOf(sessionId).filter((u) => u.toolCallId === "call_p");
  assert.ok(updates.some((u) => u.rawInput && u.rawInput.patch === rewritten), "the editor sees the rewritten input");
  assert.ok(updates.some((u) => JSON.stringify(u.content ?? "").includes("Input rewritten by a PreToolUse hook")));
  assert.match(toolResults(fake.requests[1])[0].content, /Success/);
  h.assertSchemaClean();
});

scenario("Stop hook keeps the turn going once; the second Stop carries stop_hook_active", async (ctx) => {
  const { fake, ws, home, h } = await setupWithHooks(ctx, {
    script: [{ text: "First answer." }, { text: "Tests are green now." }],
    hooks: {
      "stop.yaml": "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          script: stop.sh\n",
      "stop.sh":
        "#!/bin/sh\ninput=$(cat)\n" +
        "echo \"$input\" >> \"$STOP_LOG\"\n" +
        "case \"$input\" in *'\"stop_hook_active\":true'*) exit 0;; esac\n" +
        "printf '%s' '{\"decision\":\"block\",\"reason\":\"run the tests before stopping\"}'\n",
    },
  });
  // The script's cached copy runs elsewhere: tell it where to log through the environment.
  const log = path.join(home.root, "stop.log");
  await h.close();
  const h2 = await ctx.agent({ env: { ...home.env, STOP_LOG: log }, cwd: ws });
  await h2.initialize();
  const { sessionId } = await h2.newSession(ws);
  const res = await h2.prompt(sessionId, "fix the bug");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(fake.requests.length, 2, "the Stop hook made the agent continue exactly once");
  const second = JSON.stringify(fake.requests[1].body.messages);
  assert.match(second, /run the tests before stopping/);
  const inputs = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(inputs.length, 2);
  assert.equal(inputs[0].hook_event_name, "Stop");
  assert.equal(inputs[0].stop_hook_active, false);
  assert.equal(inputs[0].last_assistant_message, "First answer.");
  assert.equal(inputs[1].stop_hook_active, true);
  assert.equal(inputs[1].session_id, sessionId);
  assert.equal(h2.textOf(sessionId), "First answer.Tests are green now.");
  h2.assertSchemaClean();
});

scenario("UserPromptSubmit hook adds context the model sees, and can block a prompt", async (ctx) => {
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [{ text: "noted" }],
    hooks: {
      "prompt.yaml": "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: prompt.sh\n",
      "prompt.sh":
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *forbidden*) echo 'no forbidden words' >&2; exit 2;; esac\necho 'The user prefers tabs.'\n",
    },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn");
  assert.match(JSON.stringify(fake.requests[0].body.messages), /The user prefers tabs\./);
  assert.equal((await h.prompt(sessionId, "say something forbidden")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 1, "a blocked prompt never reaches the model");
  assert.match(h.textOf(sessionId), /blocked by a hook.*no forbidden words/);
  h.assertSchemaClean();
});

scenario("a PostToolUse hook that answers continue: false ends the turn and the user sees why", async (ctx) => {
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [
      { toolCalls: [{ id: "call_r", name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "should never be asked for" },
    ],
    files: { "a.txt": "one\n" },
    hooks: {
      "halt.yaml": "hooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          script: halt.sh\n",
      "halt.sh": "#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"continue\":false,\"stopReason\":\"budget exhausted for today\"}'\n",
    },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "read it")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 1, "continue: false ends the turn: no further model request");
  assert.match(h.textOf(sessionId), /budget exhausted for today/, "the editor shows the hook's stopReason");
  h.assertSchemaClean();
});

scenario("what PreToolUse and PostToolUse hooks add reaches the model with the tool result", async (ctx) => {
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [
      { toolCalls: [{ id: "call_r", name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "Noted." },
    ],
    files: { "a.txt": "one\n" },
    hooks: {
      "notes.yaml": "hooks:\n  PreToolUse:\n    - matcher: Read\n      hooks:\n        - type: command\n          script: pre.sh\n" +
        "  PostToolUse:\n    - matcher: Read\n      hooks:\n        - type: command\n          script: post.sh\n",
      "pre.sh": "#!/bin/sh\ncat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"additionalContext\":\"pre-note-4d1e\"}}'\n",
      "post.sh": "#!/bin/sh\ncat >/dev/null\necho 'post-objection-9b2c' >&2\nexit 2\n",
    },
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "read it")).stopReason, "end_turn");
  const results = toolResults(fake.requests[1]);
  assert.equal(results.length, 1);
  assert.match(results[0].content, /one/, "the tool's own output is there");
  assert.match(results[0].content, /pre-note-4d1e/, "promise: a PreToolUse hook's additionalContext reaches the model with the result");
  assert.match(results[0].content, /post-objection-9b2c/, "promise: a PostToolUse hook's objection (exit 2) is told to the model");
  h.assertSchemaClean();
});

scenario("a SessionStart hook runs after the session/new answer; the first turn waits for it and its output reaches the model", async (ctx) => {
  // The hook holds until the test creates `go`: a session/new that waited for it would never be answered.
  const gate = path.join(ctx.workspace({}), "go");
  const { fake, ws, h } = await setupWithHooks(ctx, {
    script: [{ text: "noted" }],
    hooks: {
      "start.yaml": "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n          script: start.sh\n",
      "start.sh": `#!/bin/sh\nwhile [ ! -e '${gate}' ]; do sleep 0.05; done\necho 'context from the SessionStart hook: 4242'\n`,
    },
  });
  const { sessionId } = await withTimeout(h.newSession(ws), 10000, "session/new must not wait for a SessionStart hook");
  const turn = h.prompt(sessionId, "hello");
  await sleep(500);
  assert.equal(fake.requests.length, 0, "the first turn waits for the SessionStart hooks before calling the model");
  fs.writeFileSync(gate, "");
  assert.equal((await turn).stopReason, "end_turn");
  assert.equal(fake.requests.length, 1);
  assert.match(userText(fake.requests[0]), /context from the SessionStart hook: 4242/, "the hook's output is context of the first message");
  h.assertSchemaClean();
});


scenario("a SessionStart hook still running when its session is closed ends with the session", async (ctx) => {
  // A SessionStart hook that never ends by itself (60 s timeout): it writes its pid, then waits.
  const pidFile = path.join(ctx.workspace({}), "hook.pid");
  const { ws, h } = await setupWithHooks(ctx, {
    script: [],
    hooks: {
      "start.yaml": "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n          script: start.sh\n",
      "start.sh": `#!/bin/sh\necho $$ > '${pidFile}'\nwhile :; do sleep 0.05; done\n`,
    },
  });
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "",
    { label: "the SessionStart hook running" });
  const hookPid = Number(fs.readFileSync(pidFile, "utf8"));
  ctx.defer(() => { try { process.kill(hookPid, "SIGKILL"); } catch {} });
  await h.request("session/close", { sessionId });
  await waitUntil(() => !alive(hookPid), { timeout: 5000, label: "the SessionStart hook gone after session/close" }).catch(() => {});
  assert.ok(!alive(hookPid), "promise: closing a session ends its SessionStart hook, not the hook's 60 s timeout");
});

scenario("a SessionStart hook that fails is shown to the user, and the session still starts", async (ctx) => {
  const { ws, h } = await setupWithHooks(ctx, {
    script: [{ text: "hello" }],
    hooks: { "start.yaml": "hooks:\n  SessionStart:\n    - hooks:\n        - type: command\n          command: 'echo no-context-today >&2; exit 3'\n" },
  });
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => h.noticesOf(sessionId).some((n) => /SessionStart hook failed/.test(n)),
    { label: "a notice that the SessionStart hook failed" });
  assert.match(h.textOf(sessionId), /no-context-today/, "the notice says why (the hook's stderr)");
  assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn", "the session works without the hook's context");
  h.assertSchemaClean();
});

scenario("a PreToolUse hook for a read on a files-only (virtual) executor runs on this machine: it guards, and the read goes on", async (ctx) => {
  const docs = ctx.workspace({ "note.md": "virtual note\n" });
  const log = path.join(docs, "..", `hook-log-${process.pid}-${Date.now()}.txt`);
  const { fake, ws, home, h } = await (async () => {
    const fake = await ctx.fakeModel([
      { toolCalls: [{ id: "c_vread", name: "read_file", arguments: { path: "/note.md", executor: "docs" } }] },
      { toolCalls: [{ id: "c_secret", name: "read_file", arguments: { path: "/secret.md", executor: "docs" } }] },
      { text: "read" },
    ]);
    const ws = ctx.workspace({});
    const home = ctx.configHome({ modelUrl: fake.url });
    writeHooks(home.configDir, {
      "all.yaml": "hooks:\n  PreToolUse:\n    - hooks:\n        - type: command\n          script: all.sh\n",
      "all.sh": `#!/bin/sh\ninput=$(cat)\necho "$input" >> '${log}'\ncase "$input" in *secret*) echo 'no secrets' >&2; exit 2;; esac\nexit 0\n`,
    });
    fs.mkdirSync(path.join(home.configDir, "executors"), { recursive: true });
    fs.writeFileSync(path.join(home.configDir, "executors", "docs.yaml"), `id: docs\ntype: virtual\nroot: ${docs}\nread_only: true\n`);
    fs.writeFileSync(path.join(docs, "secret.md"), "do not read\n");
    const h = await ctx.agent({ env: home.env, cwd: ws });
    await h.initialize();
    return { fake, ws, home, h };
  })();
  const { sessionId } = await h.newSession(ws);
  const res = await h.prompt(sessionId, "read the notes");
  assert.equal(res.stopReason, "end_turn");
  const ran = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
  assert.match(ran, /note\.md/, "the guard hook ran for the read on the virtual executor (on this machine), not skipped or refused");
  assert.equal(toolResults(fake.requests[1]).at(-1).content, "virtual note\n", "a guard that allows lets the read go on");
  assert.match(toolResults(fake.requests[2]).at(-1).content, /Blocked by a PreToolUse hook.*no secrets/, "a guard that blocks still blocks there");
  h.assertSchemaClean();
});
