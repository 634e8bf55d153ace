// The session list's own methods (unstable ACP): session/set_title, session/archive and
// session/unarchive with the `archived` filter of session/list, session/status; and the
// client's systemPrompt on session/new. Every message the agent writes is validated against the
// ACP schema; what is promised is what the editor's session list shows, before and after a
// restart of the server, and what the model is told.
import assert from "node:assert/strict";
import { scenario, expectRpcError, systemPrompt } from "./harness.mjs";

const listed = async (h, extra = {}) => (await h.request("session/list", extra)).sessions;
const byId = (sessions, id) => sessions.find((s) => s.sessionId === id);

scenario("session/set_title: stored, normalised, shown, kept over the automatic title and a restart; errors name the problem", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "one" }, { text: "two" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  let h = await ctx.agent({ env: home.env, cwd: ws });
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.title, {}, "sessionCapabilities.title is advertised");

  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "first prompt becomes the automatic title");
  assert.equal(byId(await listed(h), sessionId).title, "first prompt becomes the automatic title", "set-up: the automatic title");

  const reply = await h.request("session/set_title", { sessionId, title: "  Fix the\n  parser   bug \n" });
  const promise = "a title the user sets is stored and shown";
  assert.deepEqual(reply, { title: "Fix the parser bug" }, `${promise}: one line, blanks collapsed, returned as stored`);
  const info = h.updatesOf(sessionId, "session_info_update").at(-1);
  assert.equal(info?.title, "Fix the parser bug", `${promise}: the open session gets a session_info_update`);
  assert.equal(byId(await listed(h), sessionId).title, "Fix the parser bug", `${promise}: session/list shows it`);
  await h.prompt(sessionId, "another prompt");
  assert.equal(byId(await listed(h), sessionId).title, "Fix the parser bug", "an automatic title never replaces the user's");

  const long = "x".repeat(300);
  assert.equal([...(await h.request("session/set_title", { sessionId, title: long })).title].length, 201,
    "a long title is cut at 200 characters (and an ellipsis)");
  for (const [params, code, what] of [
    [{ sessionId, title: " \n " }, -32602, "a blank title"],
    [{ sessionId: "ses_nope", title: "x" }, -32002, "an unknown session"],
    [{ sessionId: "../etc", title: "x" }, -32002, "an id that cannot be a session"],
  ]) {
    const e = await expectRpcError(h.request("session/set_title", params), what);
    assert.equal(e.code, code, `session/set_title on ${what}: ${e.message}`);
  }

  // A session that is not open is retitled too; the title survives a restart and session/load.
  await h.request("session/close", { sessionId });
  assert.deepEqual(await h.request("session/set_title", { sessionId, title: "Saved title" }), { title: "Saved title" });
  await h.close();
  h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  assert.equal(byId(await listed(h), sessionId).title, "Saved title", "the title of a closed session is kept over a restart");
  await h.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(h.updatesOf(sessionId, "session_info_update").at(-1)?.title, "Saved title", "session/load shows the stored title");
  h.assertSchemaClean();
});

scenario("session/archive hides a session from session/list (closing it when open), `archived` filters, unarchive and restart keep state; session/status", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "a" }, { text: "b" }, { chunks: ["slow ", "answer"], chunkDelayMs: 60000 }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  let h = await ctx.agent({ env: home.env, cwd: ws });
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.archive, {}, "sessionCapabilities.archive is advertised");
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.status, {}, "sessionCapabilities.status is advertised");

  const a = (await h.newSession(ws)).sessionId;
  await h.prompt(a, "session a");
  const b = (await h.newSession(ws)).sessionId;
  await h.prompt(b, "session b");
  assert.deepEqual(await h.request("session/status", { sessionId: b }), { status: "open" }, "session/status: an open session");
  assert.deepEqual(byId(await listed(h), b)?.archived, false, "every listed session says whether it is archived");

  // Archiving an open session with a turn in flight cancels the turn and closes the session.
  const turn = h.prompt(b, "a long one", { timeout: 20000 });
  await h.waitUntil(() => fake.requests.length === 3, { label: "the slow turn reached the model" });
  assert.deepEqual(await h.request("session/archive", { sessionId: b }), {}, "session/archive answers {}");
  assert.equal((await turn).stopReason, "cancelled", "archiving a session with a turn in flight cancels the turn");
  assert.deepEqual(await h.request("session/status", { sessionId: b }), { status: "saved" }, "an archived session is closed (saved, not open)");
  const e = await expectRpcError(h.prompt(b, "still there?"), "prompt on an archived session");
  assert.equal(e.code, -32002, "an archived session takes no prompt until it is loaded again");

  const promise = "an archived session is hidden from the default session list";
  assert.deepEqual((await listed(h)).map((s) => s.sessionId), [a], promise);
  assert.deepEqual((await listed(h, { archived: "exclude" })).map((s) => s.sessionId), [a], `${promise} ("exclude")`);
  assert.deepEqual((await listed(h, { archived: "only" })).map((s) => [s.sessionId, s.archived]), [[b, true]], "`archived: only` lists only archived sessions");
  assert.deepEqual((await listed(h, { archived: "include" })).map((s) => s.sessionId).sort(), [a, b].sort(), "`archived: include` lists both");
  const bad = await expectRpcError(h.request("session/list", { archived: "sometimes" }), "an unknown archived filter");
  assert.equal(bad.code, -32602, `an unknown filter is invalid params, not "exclude": ${bad.message}`);
  assert.deepEqual(await h.request("session/archive", { sessionId: b }), {}, "archiving an archived session succeeds");
  const fork = await h.request("session/fork", { sessionId: b, cwd: ws, mcpServers: [] });
  assert.equal(byId(await listed(h), fork.sessionId)?.archived, false, "a fork of an archived session is new work: listed, not archived");

  // Kept over a restart (the journal and its sidecar), undone by unarchive.
  await h.close();
  h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  assert.ok(!byId(await listed(h), b), `${promise}, after a restart too`);
  assert.deepEqual(await h.request("session/status", { sessionId: b }), { status: "saved" }, "session/status of a saved session");
  assert.deepEqual(await h.request("session/unarchive", { sessionId: b }), {}, "session/unarchive answers {}");
  assert.equal(byId(await listed(h), b)?.archived, false, "an unarchived session is listed again");
  assert.deepEqual(await h.request("session/unarchive", { sessionId: b }), {}, "unarchiving a session that is not archived succeeds");
  await h.request("session/load", { sessionId: b, cwd: ws, mcpServers: [] });
  assert.deepEqual(await h.request("session/status", { sessionId: b }), { status: "open" }, "a loaded session is open");

  for (const method of ["session/archive", "session/unarchive", "session/status"]) {
    const err = await expectRpcError(h.request(method, { sessionId: "ses_missing" }), `${method} of an unknown session`);
    assert.equal(err.code, -32002, `${method} of an unknown session is resource not found: ${err.message}`);
    if (method === "session/status") assert.deepEqual(err.data, { sessionId: "ses_missing" }, "session/status names the session in `data`");
  }
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("systemPrompt: `append` joins our instructions, `override` replaces them (the environment stays); other modes and blocks are refused", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "ok" }, { text: "ok" }, { text: "ok" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  const init = await h.initialize();
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.systemPrompt, { mode: { override: {} } },
    "sessionCapabilities.systemPrompt advertises append and override");
  const text = (t) => [{ type: "text", text: t }];

  const appended = (await h.newSession(ws, { systemPrompt: { mode: "append", content: text("Always answer in French.") } })).sessionId;
  await h.prompt(appended, "hi");
  const withAppend = systemPrompt(fake.requests[0]);
  assert.match(withAppend, /You are OpenVaala/, "append keeps the agent's own instructions");
  assert.match(withAppend, /Always answer in French\.$/, "append puts the client's instructions in the system prompt, after ours");

  const replaced = (await h.newSession(ws, { systemPrompt: { mode: "override", content: text("You are a terse reviewer.") } })).sessionId;
  await h.prompt(replaced, "hi");
  const withOverride = systemPrompt(fake.requests[1]);
  assert.ok(withOverride.startsWith("You are a terse reviewer."), "override puts the client's instructions first");
  assert.doesNotMatch(withOverride, /You are OpenVaala/, "override replaces the agent's default instructions");
  assert.ok(withOverride.includes(`Working directory: ${ws}`), "override keeps the environment the agent supplies");

  const plain = (await h.newSession(ws)).sessionId;
  await h.prompt(plain, "hi");
  assert.doesNotMatch(systemPrompt(fake.requests[2]), /French|terse reviewer/, "another session is not affected");

  for (const [systemPrompt, what] of [
    [{ mode: "prepend", content: text("x") }, /prepend/],
    [{ mode: "append", content: [] }, /empty/],
    [{ mode: "append", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }, /text blocks only/],
  ]) {
    const e = await expectRpcError(h.newSession(ws, { systemPrompt }), `systemPrompt ${JSON.stringify(systemPrompt).slice(0, 60)}`);
    assert.equal(e.code, -32602, `a systemPrompt the agent cannot apply is refused, the session not created: ${e.message}`);
    assert.match(e.message, what, "the error says what is wrong");
  }
  h.assertSchemaClean();
});
