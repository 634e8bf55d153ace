// Hardening (issue 13): a hook that does not load, `serve reload`, private folders.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, agentBinary, agentEnv, assertProcessesGone, expectRpcError, makeWorkspace, pgrep, scenario, sleep, toolResultText, waitUntil } from "./harness.mjs";

const GUARD_YAML =
  "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          script: guard.sh\n";
const GUARD_SH = "#!/bin/sh\necho 'commands are not allowed here' >&2\nexit 2\n";

/** hooks/guard.yaml + hooks/guard.sh with the given mode. */
function writeGuard(configDir, mode) {
  const dir = path.join(configDir, "hooks");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "guard.sh"), GUARD_SH);
  fs.chmodSync(path.join(dir, "guard.sh"), mode);
  fs.writeFileSync(path.join(dir, "guard.yaml"), GUARD_YAML);
}

function serveReload(env) {
  return spawnSync(agentBinary(), ["serve", "reload"], { env: agentEnv(env), encoding: "utf8", timeout: 10000 });
}

function logOf(home) {
  try {
    return fs.readFileSync(path.join(home.dataDir, "logs", "openvaala.log"), "utf8");
  } catch {
    return "";
  }
}

// A model that asks bash to touch a marker file, in a workspace whose config has a guard hook
// (with the given mode on its script) meant to block that command.
async function guardedTouchSetup(ctx, guardMode) {
  const marker = `ran-${process.pid}-${Date.now()}`;
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_1", name: "bash", arguments: { command: `touch ${marker}` } }] },
    { text: "done" },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeGuard(home.configDir, guardMode);
  return { marker, ws, home };
}

scenario("a hook script without the executable bit fails the load: no session runs the command unguarded", async (ctx) => {
  const { marker, ws, home } = await guardedTouchSetup(ctx, 0o644);
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  // The session opens (its settings load), shows the problem, and runs no turn while it lasts.
  const { sessionId } = await h.newSession(ws);
  await waitUntil(() => /guard\.yaml:\d+: .*not executable/.test(h.textOf(sessionId)),
    { label: "the session shows that the guard does not load" });
  const err = await expectRpcError(h.prompt(sessionId, "make a file"), "a prompt with a guard that does not load");
  assert.match(err.message, /guard\.yaml:\d+: .*script 'guard\.sh' is not executable/, "the error names the hook file and the cause");
  assert.equal(fs.existsSync(path.join(ws, marker)), false, "the command the guard should block never ran");

  const check = spawnSync(agentBinary(), ["config", "check"], { env: agentEnv(home.env), encoding: "utf8", cwd: ws });
  assert.equal(check.status, 1, "config check exits 1");
  assert.match(check.stdout + check.stderr, /guard\.yaml:\d+: .*not executable/);
});

scenario("a running server keeps its guard when a reload brings a hook script that is not executable", async (ctx) => {
  const { marker, ws, home } = await guardedTouchSetup(ctx, 0o755);
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  // The startup load must have read the good files before they change: its last step announces
  // the slash commands (under load the load could otherwise start after the broken files were written).
  const first = await h.newSession(ws);
  await waitUntil(() => h.updatesOf(first.sessionId, "available_commands_update").length > 0,
    { label: "the startup load to finish" });
  fs.chmodSync(path.join(home.configDir, "hooks", "guard.sh"), 0o755);
  fs.writeFileSync(path.join(home.configDir, "hooks", "guard2.sh"), GUARD_SH);  // not executable
  fs.writeFileSync(path.join(home.configDir, "hooks", "guard2.yaml"), GUARD_YAML.replace("guard.sh", "guard2.sh"));
  process.kill(h.child.pid, "SIGHUP");
  await waitUntil(() => /did not load; keeping the previous one/.test(logOf(home)), { label: "the reload to be refused" });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "make a file");
  assert.equal(fs.existsSync(path.join(ws, marker)), false, "the old guard still blocks the command");
});

scenario("serve reload with a broken config prints the problem, exits 1 and signals no server", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  await h.initialize();
  writeGuard(home.configDir, 0o644);
  const r = serveReload(home.env);
  assert.equal(r.status, 1, `serve reload must exit 1 on a broken config; stdout: ${r.stdout} stderr: ${r.stderr}`);
  assert.match(r.stderr, /guard\.yaml:\d+: .*not executable/, "the problem is printed");
  assert.doesNotMatch(r.stdout, /Asked/, "no server was asked");
  await sleep(300);
  assert.doesNotMatch(h.stderr, /SIGHUP/, "the running server got no SIGHUP");
});

scenario("serve reload reaches only the servers of the same config root", async (ctx) => {
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const mine = ctx.configHome({ modelUrl: fake.url });
  const other = ctx.configHome({ modelUrl: fake.url });
  const a = await ctx.agent({ env: { ...mine.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  const b = await ctx.agent({ env: { ...other.env, OPENVAALA_LOG_STDERR: "info" }, cwd: ws });
  await a.initialize();
  await b.initialize();
  const r = serveReload(mine.env);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Asked 1 running server\(s\) to reload/, "exactly one server uses this config root");
  await waitUntil(() => /SIGHUP/.test(a.stderr), { label: "the server of this root to reload" });
  await sleep(300);
  assert.doesNotMatch(b.stderr, /SIGHUP/, "a server of another config root was signalled");
});

scenario("the config, data and cache folders are created 0700 whatever the umask", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "hi" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const fresh = path.join(home.root, "fresh");
  const env = {
    ...home.env,
    OPENVAALA_CONFIG_DIR: path.join(fresh, "config", "openvaala"),
    OPENVAALA_DATA_DIR: path.join(fresh, "data", "openvaala"),
    OPENVAALA_CACHE_DIR: path.join(fresh, "cache", "openvaala"),
  };
  const plugin = makeWorkspace({ ".openvaala-plugin/plugin.yaml": "name: tiny\nversion: 1.0.0\ndescription: a tiny plugin\n" });
  const umask0 = (args) =>
    execFileSync("/bin/sh", ["-c", 'umask 000; exec "$0" "$@"', agentBinary(), ...args], { env: agentEnv(env), encoding: "utf8" });
  umask0(["plugin", "install", plugin]);
  fs.copyFileSync(home.configPath, path.join(env.OPENVAALA_CONFIG_DIR, "config.yaml"));
  const h = await ctx.agent({ env, cwd: ws, bin: "/bin/sh", args: ["-c", 'umask 000; exec "$0" acp', agentBinary()] });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "hi");
  const mode = (p) => (fs.statSync(p).mode & 0o777).toString(8);
  for (const dir of [env.OPENVAALA_CONFIG_DIR, path.join(env.OPENVAALA_CONFIG_DIR, "plugins"), env.OPENVAALA_DATA_DIR,
    path.join(env.OPENVAALA_DATA_DIR, "sessions"), path.join(env.OPENVAALA_DATA_DIR, "logs"), env.OPENVAALA_CACHE_DIR,
    path.dirname(env.OPENVAALA_CONFIG_DIR)]) {
    assert.equal(mode(dir), "700", `${dir} must be private to the user (mode 0700), not ${mode(dir)}`);
  }
});

const NO_TERMINAL = Object.freeze({ fs: { readTextFile: true, writeTextFile: true }, terminal: false });

function readTree(dir) {
  let all = "";
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) all += fs.readFileSync(path.join(e.parentPath ?? e.path, e.name), "utf8");
  }
  return all;
}

scenario("a key echoed by the provider never reaches the editor, stderr, the log or the journal", async (ctx) => {
  const key = `sk-live-${crypto.randomUUID()}`;
  const fake = await ctx.fakeModel([
    { text: `I was called with ${key}.` },
    { status: 400, errorMessage: `Bad request for key ${key}: model not found` },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, maxRetries: 0 });
  const h = await ctx.agent({ env: { ...home.env, FAKE_MODEL_KEY: key, OPENVAALA_LOG: "debug", OPENVAALA_LOG_STDERR: "debug" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "one");
  const err = await expectRpcError(h.prompt(sessionId, "two"), "a prompt the provider refuses");
  assert.match(err.message, /HTTP 400/, "the provider's error is still told");
  assert.match(err.message, /\[redacted\]/, "the key's place is marked");
  assert.ok(!JSON.stringify(err).includes(key), `the error sent to the editor holds the key: ${err.message}`);
  await h.close();
  assert.ok(!h.stderr.includes(key), "stderr holds the key");
  assert.ok(!readTree(path.join(home.dataDir, "logs")).includes(key), "the log file holds the key");
  assert.ok(!readTree(path.join(home.dataDir, "sessions")).includes(key), "the session journal holds the key");
});

scenario("a key stored by `openvaala login` is not in a command's environment, nor in the journal", async (ctx) => {
  const key = `sk-stored-${crypto.randomUUID()}`;
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_env", name: "bash", arguments: { command: "env" } }] },
    { text: "seen" },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const creds = path.join(home.configDir, "credentials.yaml");
  fs.writeFileSync(creds, `providers:\n  fake:\n    api_key: ${key}\n`, { mode: 0o600 });
  const h = await ctx.agent({ env: { ...home.env, FAKE_MODEL_KEY: "" }, cwd: ws, clientCapabilities: NO_TERMINAL });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  await h.prompt(sessionId, "show the environment");
  assert.equal(fake.requests[0].headers.authorization, `Bearer ${key}`, "the stored key is used for the model");
  const envOutput = JSON.stringify(fake.requests[1].body);
  assert.match(envOutput, /PATH=/, "the command ran and printed its environment");
  assert.ok(!envOutput.includes(key), "the stored key is in the command's environment");
  await h.close();
  assert.ok(!readTree(path.join(home.dataDir, "sessions")).includes(key), "the journal holds the stored key");
});

/** A tmpfs of `size` at a fresh folder, or null when we may not mount (not root). */
function tinyDisk(ctx, size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-tiny-"));
  if (spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]).status !== 0) return null;
  ctx.defer(() => spawnSync("umount", ["-l", dir]));
  return dir;
}

scenario("disk full: the turn tells the editor, and the journal stays loadable with the turns after it", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "first answer" }, { text: "x".repeat(20000) }, { text: "third answer" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const disk = tinyDisk(ctx, "128k");
  if (!disk) return ctx.t.skip("needs root to mount a small tmpfs");
  const env = { ...home.env, OPENVAALA_DATA_DIR: disk };
  const h = await ctx.agent({ env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "first question");
  // Fill the disk to the last page.
  const filler = path.join(disk, "filler");
  try {
    fs.writeFileSync(filler, Buffer.alloc(1024 * 1024));
  } catch (e) {
    assert.equal(e.code, "ENOSPC");
  }
  await h.prompt(sessionId, "second question");
  assert.match(h.textOf(sessionId), /could not be saved to the session history.*(No space left|ENOSPC)/s,
    "the turn tells the editor its history was not saved");
  fs.rmSync(filler);
  await h.prompt(sessionId, "third question");
  await h.close();

  const h2 = await ctx.agent({ env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replayed = JSON.stringify(h2.updatesOf(sessionId));
  assert.match(replayed, /first question/, "the turn before the disk filled is loaded");
  assert.match(replayed, /third question/, "the turn after the disk was freed is loaded (no torn record swallowed it)");
  assert.match(replayed, /third answer/);
});

scenario("server killed with SIGKILL: what a command, a hook or an MCP server detached (setsid, double fork) is gone too", async (ctx) => {
  const tag = `${process.pid}${Date.now() % 100000}`;
  const detached = `sleep 7${tag}1`, daemon = `sleep 7${tag}2`, fromHook = `sleep 7${tag}3`, fromMcp = `sleep 7${tag}4`;
  const quiet = ">/dev/null 2>&1 </dev/null";
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_bg", name: "bash", arguments: { command: `setsid ${detached} ${quiet} & (sh -c '${daemon} ${quiet} &' &); echo started` } }] },
    { text: "started them" },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const hooks = path.join(home.configDir, "hooks");
  fs.mkdirSync(hooks, { recursive: true });
  fs.writeFileSync(path.join(hooks, "start.sh"), `#!/bin/sh\nsetsid ${fromHook} ${quiet} &\nexit 0\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(hooks, "start.yaml"), "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          script: start.sh\n");
  const marked = path.join(REPO_ROOT, "tests", "fixtures", "mcp", "marked-server.mjs");
  const mcpCommand = `(setsid ${fromMcp} ${quiet} &); exec ${JSON.stringify(process.execPath)} ${JSON.stringify(marked)} mk${tag}`;
  fs.mkdirSync(path.join(home.configDir, "mcp_servers"), { recursive: true });
  fs.writeFileSync(path.join(home.configDir, "mcp_servers", "marked.yaml"),
    `id: marked\ntype: stdio\ncommand: /bin/sh\nargs: ["-c", ${JSON.stringify(mcpCommand)}]\n`);
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: NO_TERMINAL });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  await h.prompt(sessionId, "start something in the background");
  const find = () => [detached, daemon, fromHook, fromMcp, `mk${tag}`].flatMap((p) => pgrep(p));
  try {
    await waitUntil(() => [detached, daemon, fromHook, fromMcp].every((p) => pgrep(p).length === 1),
      { label: "the four detached sleeps to run" });
    await sleep(300);  // the guard looks at the server's tree every 100 ms
    process.kill(h.pid, "SIGKILL");
    await h.exited;
    await assertProcessesGone(find, { promise: "the server killed with SIGKILL, the processes its command, hook and MCP server detached are gone within 2 s" });
  } finally {
    for (const pid of find()) try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
  }
});

/** The server's children. */
function children(pid) {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((t) =>
    fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number));
}

/** The server's `sleep` children, running or exited and not yet reaped. */
function adoptedSleeps(pid) {
  return children(pid).filter((k) => {
    try {
      return fs.readFileSync(`/proc/${k}/comm`, "utf8").trim() === "sleep";
    } catch {
      return false;
    }
  });
}

/** The server's children that are zombies (exited, never reaped). */
function zombieChildren(pid) {
  return children(pid).filter((k) => {
    try {
      const stat = fs.readFileSync(`/proc/${k}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
    } catch {
      return false;
    }
  });
}

scenario("the detached processes the server adopts are reaped when they exit (no zombies pile up)", async (ctx) => {
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_bg", name: "bash", arguments: { command: "for i in 1 2 3; do setsid sleep 0.2 >/dev/null 2>&1 </dev/null & done; echo ok" } }] },
    { text: "done" },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: NO_TERMINAL });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  await h.prompt(sessionId, "start short background jobs");
  // They end after 0.2 s and, adopted by the server, are its children until it reaps them.
  await waitUntil(() => !adoptedSleeps(h.pid).length, { timeout: 5000, label: "the adopted sleeps to end and be reaped" })
    .catch(() => assert.fail(`exited processes the server adopted are left as zombies: ${zombieChildren(h.pid)} (its sleep children: ${adoptedSleeps(h.pid)})`));
});

scenario("a file and a command output that are not UTF-8 reach the editor, the model and the journal as valid UTF-8", async (ctx) => {
  // Bytes as they are on many disks: Latin-1 text, and a command printing the same.
  const fake = await ctx.fakeModel([
    { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "latin1.txt" } }] },
    { toolCalls: [{ id: "call_bash", name: "bash", arguments: { command: "printf 'na\\357ve\\n'" } }] },
    { text: "Read both." },
    { text: "Still here." },
  ]);
  const ws = ctx.workspace({});
  fs.writeFileSync(path.join(ws, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));  // "café" in Latin-1
  const home = ctx.configHome({ modelUrl: fake.url });
  // No fs or terminal capability: the agent reads the file and runs the command itself.
  const h = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: {} });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  const first = await h.prompt(sessionId, "read latin1.txt and run the command");
  assert.equal(first.stopReason, "end_turn",
    `a tool output that is not UTF-8 must not break the turn (the model API rejects a body that is not UTF-8): ${JSON.stringify(fake.requests.map((r) => r.parseError))}`);
  assert.deepEqual(fake.requests.map((r) => r.parseError), [null, null, null], "every request body sent to the model is valid UTF-8 JSON");
  assert.match(toolResultText(fake.requests[1], "call_read"), /caf\uFFFD/, "the model sees the file with U+FFFD for the byte that is not UTF-8");
  assert.match(toolResultText(fake.requests[2], "call_bash"), /na\uFFFDve/, "and the command output likewise");
  h.assertSchemaClean();  // includes: every line on stdout is valid UTF-8

  // The journal keeps those turns: after a restart session/load replays them and the model gets them.
  await h.close();
  const h2 = await ctx.agent({ env: home.env, cwd: ws, clientCapabilities: {} });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replayed = h2.updatesOf(sessionId).filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
  assert.deepEqual([...new Set(replayed.map((u) => u.toolCallId))], ["call_read", "call_bash"],
    "both tool calls are replayed after a restart: a journal line that is not UTF-8 could not be read back");
  assert.equal((await h2.prompt(sessionId, "still there?")).stopReason, "end_turn");
  assert.match(toolResultText(fake.requests[3], "call_read"), /caf\uFFFD/, "the reloaded conversation carries the file's text");
  h2.assertSchemaClean();
});
