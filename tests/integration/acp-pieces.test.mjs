// Smaller pieces of the stable ACP surface: messageId on message chunks (live and replayed alike),
// the tool's programmatic `name` beside its title, usage_update.cost from a model's price (and the
// turn's tokens on the prompt response), additionalDirectories as roots of the session, and
// `logout`. Every message the agent writes is validated against the ACP schema.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { scenario, agentBinary, agentEnv, expectRpcError, schemaValidator } from "./harness.mjs";
import { EVERYTHING } from "../fixtures/mcp/everything.mjs";

const chunkKinds = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]);
const chunksOf = (h, sessionId) => h.updatesOf(sessionId).filter((u) => chunkKinds.has(u.sessionUpdate));
const toolCallsOf = (h, sessionId) => h.updatesOf(sessionId, "tool_call");
const addFile = (file, line) => `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch`;

scenario("messageId: the chunks of one message share an id, the next message gets a new one, and session/load shows the same ids", async (ctx) => {
  const fake = await ctx.fakeModel([
    { reasoning: "Let me look first.", chunks: ["Reading ", "the notes."], toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "notes.txt" } }] },
    { chunks: ["The notes ", "say hello."] },
    { chunks: ["Second ", "turn."] },
  ]);
  const ws = ctx.workspace({ "notes.txt": "hello\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, [{ type: "text", text: "What do the notes say?" }, { type: "text", text: "Be brief." }]);
  await h.prompt(sessionId, "Again");

  const live = chunksOf(h, sessionId).filter((u) => u.sessionUpdate !== "user_message_chunk");
  const promise = "every chunk carries the messageId of its message";
  assert.ok(live.every((u) => typeof u.messageId === "string" && u.messageId.length > 0), `${promise}: ${JSON.stringify(live)}`);
  const idsOf = (text) => [...new Set(live.filter((u) => text.includes(u.content.text)).map((u) => u.messageId))];
  const first = idsOf("Let me look first.Reading the notes.");
  const second = idsOf("The notes say hello.");
  const third = idsOf("Second turn.");
  assert.equal(first.length, 1, `the thought and the answer of one response share one id: ${JSON.stringify(live)}`);
  assert.equal(second.length, 1, "the chunks of the second response share one id");
  assert.equal(third.length, 1, "the chunks of the next turn's response share one id");
  assert.equal(new Set([first[0], second[0], third[0]]).size, 3, "a new message gets a new id");
  h.assertSchemaClean();
  await h.close();

  // Two loads by two fresh servers: the same ids as live, and the same user message ids each time.
  const replays = [];
  for (let i = 0; i < 2; i++) {
    const h2 = await ctx.agent({ env: home.env, cwd: ws });
    await h2.initialize();
    await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    replays.push(chunksOf(h2, sessionId));
    h2.assertSchemaClean();
    await h2.close();
  }
  const replay = replays[0];
  const replayed = (kind, text) => replay.filter((u) => u.sessionUpdate === kind && u.content.text === text).map((u) => u.messageId);
  const same = "session/load replays a message with the messageId the editor saw live";
  assert.deepEqual(replayed("agent_thought_chunk", "Let me look first."), first, same);
  assert.deepEqual(replayed("agent_message_chunk", "Reading the notes."), first, same);
  assert.deepEqual(replayed("agent_message_chunk", "The notes say hello."), second, same);
  assert.deepEqual(replayed("agent_message_chunk", "Second turn."), third, same);
  const users = replay.filter((u) => u.sessionUpdate === "user_message_chunk");
  assert.equal(users.length, 3, "three user blocks replayed");
  assert.ok(users.every((u) => typeof u.messageId === "string"), "user chunks carry a messageId");
  assert.equal(users[0].messageId, users[1].messageId, "the two blocks of one prompt share its id");
  assert.notEqual(users[1].messageId, users[2].messageId, "the next prompt has a new id");
  assert.ok(!live.some((u) => u.messageId === users[0].messageId), "a user message's id is not an answer's");
  assert.deepEqual(replays[1].map((u) => u.messageId), replay.map((u) => u.messageId), "every load gives the same ids");
});

scenario("tool call `name`: the tool the model called, beside the title, live and on session/load", async (ctx) => {
  const fake = await ctx.fakeModel([
    {
      toolCalls: [
        { id: "call_read", name: "read_file", arguments: { path: "notes.txt" } },
        { id: "call_plan", name: "update_plan", arguments: { plan: [{ step: "Read", status: "in_progress" }] } },
        { id: "call_patch", name: "apply_patch", arguments: { patch: addFile("new.txt", "x") } },
        { id: "call_bash", name: "bash", arguments: { command: "true" } },
        { id: "call_nope", name: "no_such_tool", arguments: {} },
      ],
    },
    { text: "Done." },
  ]);
  const ws = ctx.workspace({ "notes.txt": "hello\n" });
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  await h.prompt(sessionId, "go");
  const expected = { call_read: "read_file", call_plan: "update_plan", call_patch: "apply_patch", call_bash: "bash", call_nope: "no_such_tool" };
  const names = (calls) => Object.fromEntries(calls.map((c) => [c.toolCallId, c.name]));
  const promise = "a tool call carries the programmatic name the model called";
  assert.deepEqual(names(toolCallsOf(h, sessionId)), expected, promise);
  const read = toolCallsOf(h, sessionId).find((c) => c.toolCallId === "call_read");
  assert.notEqual(read.title, read.name, "the title stays the human-readable one");
  h.assertSchemaClean();
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(names(toolCallsOf(h2, sessionId)), expected, `${promise}, on session/load too`);
  h2.assertSchemaClean();
});

const PRICED_MODELS =
  "models:\n" +
  "  - plain-model\n" +
  "  - id: test-model\n" +
  "    price: {input: 2.0, output: 8.0, cached_input: 0.5, currency: USD}\n";

scenario("usage_update.cost: the session's cumulative cost at the model's price, kept across session/load; none for an unpriced model; the turn's tokens on the prompt response", async (ctx) => {
  const fake = await ctx.fakeModel([
    { text: "one", usage: { input: 1000, output: 100, cached: 400 } },
    { text: "two", usage: { input: 2000, output: 200 } },
    { text: "three", usage: { input: 100, output: 10 } },
    { text: "four", usage: { input: 50, output: 5 } },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, providerYaml: PRICED_MODELS });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const costs = (agent) => agent.updatesOf(sessionId, "usage_update").map((u) => u.cost);
  const near = (a, b) => Math.abs(a - b) < 1e-12;

  const r1 = await h.prompt(sessionId, "first");
  // 600 uncached input at 2.0, 400 cached at 0.5, 100 output at 8.0, per million tokens
  const c1 = (600 * 2 + 400 * 0.5 + 100 * 8) / 1e6;
  const promise = "usage_update carries the session's cumulative cost at the configured price";
  assert.equal(costs(h).length, 1, "one usage_update per model response");
  assert.equal(costs(h)[0]?.currency, "USD", promise);
  assert.ok(near(costs(h)[0].amount, c1), `${promise}: ${costs(h)[0].amount} != ${c1}`);
  const usagePromise = "the prompt response carries the turn's tokens (unstable PromptResponse.usage)";
  assert.deepEqual(r1.usage, { totalTokens: 1100, inputTokens: 1000, outputTokens: 100, cachedReadTokens: 400 }, usagePromise);
  assert.equal(schemaValidator().validateDef("acp-unstable", "Usage", r1.usage), null, `${usagePromise}: valid Usage`);

  const r2 = await h.prompt(sessionId, "second");
  const c2 = c1 + (2000 * 2 + 200 * 8) / 1e6;
  assert.ok(near(costs(h)[1].amount, c2), `${promise}: the second turn adds to the first (${costs(h)[1].amount} != ${c2})`);
  assert.deepEqual(r2.usage, { totalTokens: 2200, inputTokens: 2000, outputTokens: 200 }, `${usagePromise}: this turn's only`);
  h.assertSchemaClean();
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  await h2.prompt(sessionId, "third");
  const c3 = c2 + (100 * 2 + 10 * 8) / 1e6;
  const after = costs(h2).at(-1);
  assert.ok(after && near(after.amount, c3), `the cost is kept across session/load (journaled): ${JSON.stringify(after)} != ${c3}`);

  await h2.request("session/set_config_option", { sessionId, configId: "model", value: "fake/plain-model" });
  await h2.prompt(sessionId, "fourth");
  const last = h2.updatesOf(sessionId, "usage_update").at(-1);
  assert.equal(last.used, 55, "set-up: the unpriced model's usage_update arrived");
  assert.ok(!("cost" in last), `no cost for a model without a price: ${JSON.stringify(last)}`);
  h2.assertSchemaClean();
});

scenario("config check: a model's price is validated with path:line messages; the plain list stays valid", async (ctx) => {
  const home = ctx.configHome({
    modelUrl: "http://127.0.0.1:9",
    providerYaml:
      "models:\n" +
      "  - plain-model\n" +
      "  - id: test-model\n" +
      "    price: {input: 2.0, output: 8.0}\n" +
      "  - id: bad-rate\n" +
      "    price:\n" +
      "      input: cheap\n" +
      "      output: -1\n" +
      "  - id: no-output\n" +
      "    price: {input: 1, currency: EUR, discount: 3}\n" +
      "  - price: {input: 1, output: 1}\n",
  });
  const r = spawnSync(agentBinary(), ["config", "check"], { env: agentEnv(home.env), encoding: "utf8" });
  const file = home.configPath;
  const problems = (r.stdout + r.stderr).split("\n").filter((l) => l.startsWith(`${file}:`));
  // Lines found in the file the harness wrote (its set-up above `models:` may grow).
  const lines = fs.readFileSync(file, "utf8").split("\n");
  const lineOf = (text) => lines.findIndex((l) => l.trim() === text.trim()) + 1;
  const [cheap, minus, noOutput, noId] = ["      input: cheap", "      output: -1", "  - id: no-output", "  - price: {input: 1, output: 1}"].map(lineOf);
  assert.deepEqual(problems, [
    `${file}:${cheap}: provider 'fake': model 'bad-rate': price.input must be a number (what a million tokens cost, 0 or more), not 'cheap'`,
    `${file}:${minus}: provider 'fake': model 'bad-rate': price.output must be a number (what a million tokens cost, 0 or more), not '-1'`,
    `${file}:${noOutput + 1}: unknown key 'discount' in provider 'fake': model 'no-output': price (allowed: input, output, cached_input, currency)`,
    `${file}:${noOutput + 1}: provider 'fake': model 'no-output': price.output is missing (what a million output tokens cost)`,
    `${file}:${noId}: provider 'fake': a models entry written as a mapping needs 'id: <model name>'`,
  ], "each mistake in a price is reported at its line");
  assert.equal(r.status, 1, "exit 1 on errors");
});

scenario("additionalDirectories: edits and reads inside them skip the prompt like the cwd, outside still asks; MCP roots include them; bad entries are -32602", async (ctx) => {
  const outsideSecret = `OUTSIDE-${process.pid}`;
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({ "proj/a.txt": "a\n", "extra/lib.txt": "shared lib\n", "elsewhere/secret.txt": `${outsideSecret}\n` });
  const proj = path.join(ws, "proj");
  const extra = path.join(ws, "extra");
  const home = ctx.configHome({ modelUrl: fake.url });
  // MCP tools ask in every mode but Full auto: allowed here; everything else asked is rejected.
  const onPermission = (params) => (params.toolCall.toolCallId === "call_roots" ? "allow_once" : "reject_once");
  const h = await ctx.agent({ env: home.env, cwd: proj, onPermission });
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.additionalDirectories, {}, "advertised in sessionCapabilities");

  const bad = [
    [["relative/dir"], /relative\/dir/],
    [[path.join(ws, "missing")], /missing/],
    [[path.join(ws, "proj/a.txt")], /a\.txt/],
  ];
  for (const [dirs, names] of bad) {
    const e = await expectRpcError(h.newSession(proj, { additionalDirectories: dirs }), `additionalDirectories ${dirs}`);
    assert.equal(e.code, -32602, `a bad additionalDirectories entry is invalid params: ${e.message}`);
    assert.match(e.message, names, "the error names the entry");
  }

  fake.push([
    { toolCalls: [{ id: "call_read_in", name: "read_file", arguments: { path: path.join(extra, "lib.txt") } }] },
    { toolCalls: [{ id: "call_edit_in", name: "apply_patch", arguments: { patch: addFile(path.join(extra, "new.txt"), "added") } }] },
    { toolCalls: [{ id: "call_read_out", name: "read_file", arguments: { path: path.join(ws, "elsewhere/secret.txt") } }] },
    { toolCalls: [{ id: "call_roots", name: "mcp__every__get-roots-list", arguments: {} }] },
    { text: "done" },
  ]);
  const everything = { name: "every", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] };
  const { sessionId } = await h.newSession(proj, { additionalDirectories: [extra], mcpServers: [everything] });
  await h.setMode(sessionId, "accept_edits");
  await h.prompt(sessionId, "go", { timeout: 60000 });

  const asked = h.requestsOf("session/request_permission").map((r) => r.params.toolCall.toolCallId);
  const promise = "inside an additional directory reads and edits run without asking, as in the cwd; outside still asks";
  assert.deepEqual(asked, ["call_read_out", "call_roots"], `${promise} (the MCP tool asks as MCP tools do)`);
  assert.equal(fs.readFileSync(path.join(extra, "new.txt"), "utf8"), "added\n", `${promise}: the edit ran`);
  assert.ok(!JSON.stringify(fake.requests.map((r) => r.body)).includes(outsideSecret), `${promise}: the rejected read told the model nothing`);
  const roots = fake.requests[4].body.messages.filter((m) => m.role === "tool").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).at(-1);
  assert.match(roots, new RegExp(`file://${proj}`), "MCP roots/list lists the cwd");
  assert.match(roots, new RegExp(`file://${extra}`), "MCP roots/list lists the additional directory");
  h.assertSchemaClean();

  // session/resume and session/load take the list anew: without it, the folder is outside again.
  await h.request("session/close", { sessionId });
  fake.push([{ toolCalls: [{ id: "call_edit_again", name: "apply_patch", arguments: { patch: addFile(path.join(extra, "again.txt"), "x") } }] }, { text: "ok" }]);
  await h.request("session/resume", { sessionId, cwd: proj, mcpServers: [] });
  await h.setMode(sessionId, "accept_edits");
  await h.prompt(sessionId, "again");
  assert.ok(h.requestsOf("session/request_permission").some((r) => r.params.toolCall.toolCallId === "call_edit_again"),
    "a session resumed without additionalDirectories has only its cwd as root");
  await h.request("session/close", { sessionId });
  fake.push([{ toolCalls: [{ id: "call_edit_load", name: "apply_patch", arguments: { patch: addFile(path.join(extra, "loaded.txt"), "y") } }] }, { text: "ok" }]);
  await h.request("session/load", { sessionId, cwd: proj, mcpServers: [], additionalDirectories: [extra] });
  await h.setMode(sessionId, "accept_edits");
  await h.prompt(sessionId, "once more");
  assert.ok(!h.requestsOf("session/request_permission").some((r) => r.params.toolCall.toolCallId === "call_edit_load"),
    "session/load with additionalDirectories makes them roots again");
  assert.equal(fs.readFileSync(path.join(extra, "loaded.txt"), "utf8"), "y\n");
  // session/fork takes the list as the fork's whole set of extra roots, like load and resume.
  fake.push([{ toolCalls: [{ id: "call_edit_fork", name: "apply_patch", arguments: { patch: addFile(path.join(extra, "forked.txt"), "z") } }] }, { text: "ok" }]);
  const forked = await h.request("session/fork", { sessionId, cwd: proj, mcpServers: [], additionalDirectories: [extra] });
  await h.setMode(forked.sessionId, "accept_edits");
  await h.prompt(forked.sessionId, "in the fork");
  assert.ok(!h.requestsOf("session/request_permission").some((r) => r.params.toolCall.toolCallId === "call_edit_fork"),
    "session/fork with additionalDirectories makes them roots of the fork");
  assert.equal(fs.readFileSync(path.join(extra, "forked.txt"), "utf8"), "z\n");
  fake.push([{ toolCalls: [{ id: "call_edit_fork_bare", name: "apply_patch", arguments: { patch: addFile(path.join(extra, "bare.txt"), "w") } }] }, { text: "ok" }]);
  const bare = await h.request("session/fork", { sessionId, cwd: proj, mcpServers: [] });
  await h.setMode(bare.sessionId, "accept_edits");
  await h.prompt(bare.sessionId, "in the bare fork");
  assert.ok(h.requestsOf("session/request_permission").some((r) => r.params.toolCall.toolCallId === "call_edit_fork_bare"),
    "a fork without additionalDirectories does not inherit its source's extra roots (the list is complete, per the schema)");
  const e = await expectRpcError(h.request("session/resume", { sessionId: "ses_nope", cwd: proj, additionalDirectories: ["nope"] }));
  assert.equal(e.code, -32602, "session/resume checks additionalDirectories too");
  h.assertSchemaClean();
}, { timeout: 90000 });

const KEY = "sk-logout-SECRET-77e1";

scenario("logout forgets the stored API key: credentials.yaml is gone, config.yaml untouched, the next prompt needs authentication", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "hello" }]);
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const env = { ...home.env };
  delete env.FAKE_MODEL_KEY;
  // An anthropic-type provider needs a key: without one a prompt fails before any request.
  const input = path.join(home.root, "key.txt");
  fs.writeFileSync(input, `${KEY}\n`);
  const fd = fs.openSync(input, "r");
  const login = spawnSync(agentBinary(), ["login", "--provider", "fake", "--api-type", "anthropic", "--base-url", fake.url, "--model", "m"],
    { stdio: [fd, "pipe", "pipe"], env: agentEnv(env), encoding: "utf8", timeout: 10000 });
  fs.closeSync(fd);
  assert.equal(login.status, 0, `set-up: login failed: ${login.stderr}`);
  const creds = path.join(home.configDir, "credentials.yaml");
  const config = fs.readFileSync(home.configPath, "utf8");

  const h = await ctx.agent({ env, cwd: ws });
  const before = await expectRpcError(h.request("logout", {}), "logout before initialize");
  assert.match(before.message, /initialize/, "logout before initialize is refused like the other methods");
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.auth, { logout: {}, status: {} }, "agentCapabilities.auth advertises logout and status");
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn", "set-up: the stored key works");
  assert.equal(fake.requests[0].headers["x-api-key"], KEY);
  const signedIn = await h.request("auth/status", {});
  assert.equal(signedIn.state, "authenticated", "auth/status: a stored key means authenticated");
  assert.equal(signedIn.accounts.length, 1, "auth/status lists the provider's key as an account");
  assert.match(signedIn.accounts[0].label, /fake API key \(.*credentials\.yaml\)/, "the account names the provider and where its key is kept");
  assert.equal(signedIn.accounts[0].active, true);
  assert.ok(!JSON.stringify(signedIn).includes(KEY), "auth/status never carries the key");

  assert.deepEqual(await h.request("logout", {}), {}, "logout answers {}");
  const told = await h.waitUntil(() => h.wire.fromAgent.find((m) => m.method === "auth/status_update"), { label: "auth/status_update" });
  assert.equal(told.params.state, "unauthenticated", "after logout the client is told the agent needs a sign-in (auth/status_update)");
  assert.equal((await h.request("auth/status", {})).state, "unauthenticated", "auth/status after logout: unauthenticated");
  const promise = "logout forgets the key `openvaala login` stored";
  assert.ok(!fs.existsSync(creds), `${promise}: credentials.yaml is gone`);
  assert.equal(fs.readFileSync(home.configPath, "utf8"), config, `${promise}: config.yaml is untouched`);
  const e = await expectRpcError(h.prompt(sessionId, "again"), "prompt after logout");
  assert.equal(e.code, -32000, `${promise}: the next prompt needs authentication (auth_required): ${e.message}`);
  assert.equal(fake.requests.length, 1, `${promise}: no model request without a key`);
  assert.ok(!h.stderr.includes(KEY), "the key is never logged");
  assert.deepEqual(await h.request("logout", {}), {}, "a second logout is fine");
  assert.equal(h.wire.fromAgent.filter((m) => m.method === "auth/status_update").length, 1,
    "auth/status_update only when the state changes (the second logout changes nothing)");
  h.assertSchemaClean();
});
