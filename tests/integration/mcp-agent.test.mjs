// MCP tools end to end through `openvaala acp` with the fake model: the model is offered
// mcp__<id>__<tool> with the server's own input schema, calls it, the call shows up as an ACP
// tool_call (permission per session mode), and the server's answer reaches the next model request.
// Servers: @modelcontextprotocol/server-everything over stdio (session/new and mcp_servers/*.yaml),
// Streamable HTTP and SSE; an @modelcontextprotocol/sdk server hosted by this client through
// MCP-over-ACP (McpOverAcpProvider; session/cancel mid-call cancels the editor's mcp/message with
// $/cancel_request, in the current and the older mcp/connect form). Lifecycle: nothing is left
// running after stdin EOF or a dead client, session/close stops the session's servers, a required
// server that cannot start fails the turn.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import {
  scenario, agentBinary, assertProcessesGone, describePids, expectRpcError, killMatching, pgrep, sleep, toolCallStatuses, toolCallsById,
  toolNames, toolResultText, withTimeout, writeFiles,
} from "./harness.mjs";
import { EVERYTHING, everythingTools, startEverything } from "../fixtures/mcp/everything.mjs";
import { makeTunnelServer } from "../fixtures/mcp/tunnel-server.mjs";

const MARKED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp/marked-server.mjs");

const ECHO_SCRIPT = [
  { text: "Echoing.", toolCalls: [{ id: "call_echo", name: "mcp__everything__echo", arguments: { message: "hi" } }] },
  { text: "The server said hi back." },
];

const everythingStdio = (name = "everything") => ({ name, command: process.execPath, args: [EVERYTHING, "stdio"], env: [] });

/** The model request's OpenAI tool spec named `name`. */
function offeredTool(req, name) {
  const t = (req.body.tools ?? []).find((x) => x.function?.name === name);
  assert.ok(t, `tool ${name} offered to the model; got ${toolNames(req).join(", ")}`);
  return t.function;
}

/** The role:"tool" message answering `id`, after the replayed assistant tool call. */
function toolMessage(req, id, name) {
  const msgs = req.body.messages;
  const m = msgs.find((x) => x.role === "tool" && x.tool_call_id === id);
  assert.ok(m, `request carries a role:"tool" message for ${id}: ${JSON.stringify(msgs).slice(-2000)}`);
  const a = msgs.find((x) => x.role === "assistant" && (x.tool_calls ?? []).some((tc) => tc.id === id));
  assert.ok(a, `the assistant's ${id} call is replayed`);
  assert.equal(a.tool_calls.find((tc) => tc.id === id).function.name, name);
  assert.ok(msgs.indexOf(a) < msgs.indexOf(m), "the call comes before its result");
  return typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("");
}

/**
 * One tool call's updates as the client saw them: the first is `tool_call` (pending, with the
 * arguments), then in_progress, then completed with `text` as content. Returns the merged call.
 */
function assertToolCallLifecycle(h, sessionId, id, { title, kind, rawInput, text }) {
  const ups = toolCallsById(h, sessionId).get(id);
  assert.ok(ups, `tool call ${id} reported; got ${[...toolCallsById(h, sessionId).keys()]}`);
  assert.equal(ups[0].sessionUpdate, "tool_call", "announced with a tool_call update first");
  assert.equal(ups.filter((u) => u.sessionUpdate === "tool_call").length, 1, "exactly one tool_call update");
  assert.equal(ups[0].status, "pending");
  if (title !== undefined) assert.equal(ups[0].title, title);
  if (kind !== undefined) assert.equal(ups[0].kind, kind);
  assert.deepEqual(ups[0].rawInput, rawInput);
  assert.deepEqual(ups.map((u) => u.status).filter(Boolean), ["pending", "in_progress", "completed"]);
  const done = ups.at(-1);
  assert.equal(done.status, "completed");
  assert.deepEqual(done.content, [{ type: "content", content: { type: "text", text } }]);
  return ups;
}

/** The echo turn's exact outcome, whatever the transport: offered spec, tool_call, result to the model. */
async function assertEchoTurn(h, fake, sessionId, { permission }) {
  const listed = (await everythingTools()).find((t) => t.name === "echo");
  assert.ok(listed, "server-everything has an echo tool");

  // 1. the first request offers mcp__everything__echo with the server's own input schema
  assert.equal(fake.requests.length, 2, "two model requests (tool call, then the answer)");
  const spec = offeredTool(fake.requests[0], "mcp__everything__echo");
  assert.deepEqual(spec.parameters, listed.inputSchema);
  assert.ok(spec.description.includes(listed.description), `description carries the server's: ${spec.description}`);
  const offered = toolNames(fake.requests[0]).filter((n) => n.startsWith("mcp__"));
  const all = (await everythingTools()).map((t) => `mcp__everything__${t.name}`);
  assert.deepEqual([...offered].sort(), [...all].sort(), "every server-everything tool is offered, nothing else");
  for (const n of ["read_file", "apply_patch", "bash"]) assert.ok(toolNames(fake.requests[0]).includes(n), `builtin ${n} still offered`);

  // 2. the client saw the call, with its status updates
  assertToolCallLifecycle(h, sessionId, "call_echo", {
    title: `${listed.title ?? listed.name} (everything MCP)`,
    kind: listed.annotations?.readOnlyHint ? "read" : "other",
    rawInput: { message: "hi" },
    text: "Echo: hi",
  });
  const perms = h.requestsOf("session/request_permission");
  if (permission) {
    assert.deepEqual(perms.map((p) => p.params.toolCall.toolCallId), ["call_echo"], "asked once, for the MCP call");
    const kinds = perms[0].params.options.map((o) => o.kind);
    for (const k of ["allow_once", "allow_always", "reject_once"]) assert.ok(kinds.includes(k), `option ${k}: ${kinds}`);
    // the call runs only after the answer: in_progress comes after the permission request
    const order = h.wire.transcript.filter((e) => e.msg).map((e) => e.msg);
    const iPerm = order.findIndex((m) => m.method === "session/request_permission");
    const iRun = order.findIndex((m) => m.params?.update?.toolCallId === "call_echo" && m.params.update.status === "in_progress");
    assert.ok(iPerm >= 0 && iPerm < iRun, "permission asked before the call runs");
  } else {
    assert.deepEqual(perms.map((p) => p.params.toolCall.toolCallId), [], "full_auto: no permission request");
  }

  // 3. the next request carries the server's answer
  assert.equal(toolMessage(fake.requests[1], "call_echo", "mcp__everything__echo"), "Echo: hi");
  assert.equal(h.answerOf(sessionId), "Echoing.The server said hi back.");
  h.assertSchemaClean();
}

// ------------------------------------------------------------------------------------------
// the echo turn over every way of configuring server-everything
// ------------------------------------------------------------------------------------------

scenario("stdio server from session/new: offered with its schema, tool_call with status updates, result to the model", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: ECHO_SCRIPT });
  const { sessionId } = await h.newSession(ws, { mcpServers: [everythingStdio()] });
  const res = await h.prompt(sessionId, "Echo hi through the everything server");
  assert.equal(res.stopReason, "end_turn");
  await assertEchoTurn(h, fake, sessionId, { permission: true });
}, { timeout: 60000 });

scenario("stdio server from $OPENVAALA_CONFIG_DIR/mcp_servers/everything.yaml", async (ctx) => {
  const fake = await ctx.fakeModel(ECHO_SCRIPT);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, {
    "mcp_servers/everything.yaml":
      "id: everything\n" +
      "type: stdio\n" +
      `command: ${JSON.stringify(process.execPath)}\n` +
      `args: [${JSON.stringify(EVERYTHING)}, stdio]\n`,
  });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws); // mcpServers: []
  const res = await h.prompt(sessionId, "Echo hi through the everything server");
  assert.equal(res.stopReason, "end_turn");
  await assertEchoTurn(h, fake, sessionId, { permission: true });
  assert.doesNotMatch(h.stderr, /config: .*mcp_servers/i, "no config diagnostics for the file");
}, { timeout: 60000 });

for (const [type, mode, urlPath] of [["http", "streamableHttp", "/mcp"], ["sse", "sse", "/sse"]]) {
  scenario(`${type} server from session/new ({type:"${type}"}): server-everything on loopback`, async (ctx) => {
    const srv = await startEverything(mode);
    ctx.defer(() => srv.stop());
    const { fake, ws, h } = await ctx.setup({ script: ECHO_SCRIPT });
    const url = `http://127.0.0.1:${srv.port}${urlPath}`;
    const { sessionId } = await h.newSession(ws, { mcpServers: [{ type, name: "everything", url, headers: [] }] });
    await h.setMode(sessionId, "full_auto");
    const res = await h.prompt(sessionId, "Echo hi through the everything server");
    assert.equal(res.stopReason, "end_turn");
    await assertEchoTurn(h, fake, sessionId, { permission: false });
  }, { timeout: 60000 });
}

// ------------------------------------------------------------------------------------------
// MCP-over-ACP: this client hosts the server
// ------------------------------------------------------------------------------------------

/** Client options that answer mcp/message with `provider` (an McpOverAcpProvider) and nothing else. */
function tunnelClientOpts(provider) {
  return {
    onRequest: (method, params, rctx) => {
      if (method === "mcp/message") return provider.handleRequest(rctx);
      throw new acpUnstable.RequestError(-32601, `Method not found: ${method}`);
    },
  };
}

scenario("MCP-over-ACP: the client's McpOverAcpProvider server ({type:\"acp\"}) answers the model's call", async (ctx) => {
  const tunnel = await makeTunnelServer();
  ctx.defer(() => tunnel.close());
  const provider = new acpUnstable.McpOverAcpProvider();
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_tunnel", name: "mcp__editor-tools__echo", arguments: { message: "through the tunnel" } }] },
      { text: "Tunnel ok." },
    ],
    agentOpts: tunnelClientOpts(provider),
  });
  const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: tunnel.handler });
  assert.deepEqual(reg.declaration, { type: "acp", name: "editor-tools", serverId: reg.serverId });
  const { sessionId } = await h.newSession(ws, { mcpServers: [reg.declaration] });
  await h.setMode(sessionId, "full_auto");
  const res = await h.prompt(sessionId, "Use the editor's echo");
  assert.equal(res.stopReason, "end_turn");

  const offered = toolNames(fake.requests[0]).filter((n) => n.startsWith("mcp__")).sort();
  assert.deepEqual(offered, ["mcp__editor-tools__count", "mcp__editor-tools__echo", "mcp__editor-tools__slow"]);
  const spec = offeredTool(fake.requests[0], "mcp__editor-tools__echo");
  assert.equal(spec.parameters.type, "object");
  assert.deepEqual(spec.parameters.required, ["message"]);
  assert.equal(spec.parameters.properties.message.type, "string");
  assertToolCallLifecycle(h, sessionId, "call_tunnel", {
    title: "echo (editor-tools MCP)",
    rawInput: { message: "through the tunnel" },
    text: "tunnel echo: through the tunnel",
  });
  assert.equal(toolMessage(fake.requests[1], "call_tunnel", "mcp__editor-tools__echo"), "tunnel echo: through the tunnel");
  assert.equal(h.answerOf(sessionId), "Tunnel ok.");
  assert.deepEqual(tunnel.calls.filter((c) => c.tool === "echo").map((c) => c.message), ["through the tunnel"]);
  // it went through mcp/message on this connection, addressed to the registered server
  const sent = h.wire.fromAgent.filter((m) => m.method === "mcp/message");
  assert.ok(sent.some((m) => m.params.method === "tools/call" && m.params.params.name === "echo"), "tools/call went through mcp/message");
  for (const m of sent) assert.equal(m.params.serverId, reg.serverId);
  assert.deepEqual(h.requestsOf("session/request_permission"), [], "full_auto: no permission request");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("MCP-over-ACP: two sessions opened at once on one editor server never reuse an active (serverId, requestId)", async (ctx) => {
  // Zed and VS Code pass the same tunnelled server to every session (e.g. after a reload that
  // reopens several chats); the editor's provider refuses a requestId already active for that
  // serverId, so ids must be unique per connection, not per session.
  const tunnel = await makeTunnelServer();
  ctx.defer(() => tunnel.close());
  const provider = new acpUnstable.McpOverAcpProvider();
  const { ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_a", name: "mcp__editor-tools__echo", arguments: { message: "from a" } }] },
      { text: "A ok." },
      { toolCalls: [{ id: "call_b", name: "mcp__editor-tools__echo", arguments: { message: "from b" } }] },
      { text: "B ok." },
    ],
    agentOpts: tunnelClientOpts(provider),
  });
  const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: tunnel.handler });
  const [a, b] = await Promise.all([
    h.newSession(ws, { mcpServers: [reg.declaration] }),
    h.newSession(ws, { mcpServers: [reg.declaration] }),
  ]);
  for (const { sessionId } of [a, b]) {
    await h.setMode(sessionId, "full_auto");
    assert.equal((await h.prompt(sessionId, "Use the editor's echo")).stopReason, "end_turn");
  }
  assert.deepEqual(tunnel.calls.filter((c) => c.tool === "echo").map((c) => c.message), ["from a", "from b"],
    "both sessions reached the editor's server");
  assert.doesNotMatch(h.stderr, /duplicate active MCP request ID/, "the editor never refused a duplicate request id");
  const ids = h.wire.fromAgent.filter((m) => m.method === "mcp/message" && m.id !== undefined).map((m) => m.params.requestId);
  assert.equal(new Set(ids).size, ids.length, `promise: inner MCP request ids are unique on the connection; sent ${ids.join(", ")}`);
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("MCP-over-ACP: the editor's MCP error reaches the model with the editor's own error code", async (ctx) => {
  const refusal = { code: -32099, message: "editor-tools refused: the workspace is locked" };
  const tunnel = await makeTunnelServer({ toolErrors: { echo: refusal } });
  ctx.defer(() => tunnel.close());
  const provider = new acpUnstable.McpOverAcpProvider();
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_refused", name: "mcp__editor-tools__echo", arguments: { message: "please" } }] },
      { text: "The editor refused." },
    ],
    agentOpts: tunnelClientOpts(provider),
  });
  const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: tunnel.handler });
  const { sessionId } = await h.newSession(ws, { mcpServers: [reg.declaration] });
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "Use the editor's echo")).stopReason, "end_turn");
  assert.deepEqual(tunnel.calls.filter((c) => c.refused), [{ tool: "echo", refused: -32099 }], "set-up: the editor refused the call");
  const told = toolResultText(fake.requests[1], "call_refused");
  assert.match(told, /editor-tools refused: the workspace is locked/, "the model is told the editor's message");
  assert.match(told, /-32099/, `promise: the editor's MCP error code (-32099) reaches the model unchanged; the model was told: ${told}`);
  assert.doesNotMatch(told, /-32000/, `the code is the editor's, not one of ours: ${told}`);
  assert.equal(toolCallStatuses(h, sessionId, "call_refused").at(-1), "failed", "the editor sees the call fail");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("MCP-over-ACP: a call the editor cancels on its own (its user stopped it) reaches the model as cancelled (-32800), not as a server error", async (ctx) => {
  const tunnel = await makeTunnelServer();
  ctx.defer(() => tunnel.close());
  const provider = new acpUnstable.McpOverAcpProvider();
  const stoppedInTheEditor = async (rctx) => {
    if (rctx.method === "tools/call") throw new acpUnstable.RequestError(-32800, "the user stopped the call in the editor");
    return tunnel.handler(rctx);
  };
  const { fake, ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_stopped", name: "mcp__editor-tools__echo", arguments: { message: "please" } }] },
      { text: "The user stopped it." },
    ],
    agentOpts: tunnelClientOpts(provider),
  });
  const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: stoppedInTheEditor });
  const { sessionId } = await h.newSession(ws, { mcpServers: [reg.declaration] });
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "Use the editor's echo")).stopReason, "end_turn");
  const told = toolResultText(fake.requests[1], "call_stopped");
  assert.match(told, /-32800/,
    `promise: a tunnelled request the editor cancelled is answered -32800 (cancelled), not a generic server error; the model was told: ${told}`);
  assert.doesNotMatch(told, /-32000/, `not one of our generic codes: ${told}`);
  h.assertSchemaClean();
}, { timeout: 60000 });

/**
 * An editor-side tools/call that does not finish by itself: it settles only when the agent
 * cancels it (the ACP SDK aborts `signal` on $/cancel_request for that request) or when the
 * scenario ends (so nothing is left pending in this process).
 */
function holdCall(ctx, held, form, signal, answer) {
  return new Promise((resolve, reject) => {
    const entry = { form, aborted: false };
    held.push(entry);
    const abort = () => {
      entry.aborted = true;
      reject(new acpUnstable.RequestError(-32800, "editor-tools: slow cancelled"));
    };
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
    ctx.defer(() => resolve(answer));
  });
}

for (const form of ["mcp/message {serverId}", "mcp/connect (older form)"]) {
  scenario(`MCP-over-ACP (${form}): session/cancel mid-call sends the editor $/cancel_request for the outstanding mcp/message; the turn ends cancelled, the model is told`, async (ctx) => {
    const legacy = form.startsWith("mcp/connect");
    const tunnel = await makeTunnelServer();
    ctx.defer(() => tunnel.close());
    const provider = new acpUnstable.McpOverAcpProvider();
    const held = [];
    const slowText = { content: [{ type: "text", text: "slow done" }] };
    const { fake, ws, h } = await ctx.setup({
      script: [{ toolCalls: [{ id: "call_slow", name: "mcp__editor-tools__slow", arguments: { ms: 60000 } }] }],
      agentOpts: {
        onRequest: async (method, params, rctx) => {
          if (!legacy) {
            if (method === "mcp/message") return provider.handleRequest(rctx);
            throw new acpUnstable.RequestError(-32601, `Method not found: ${method}`);
          }
          // the older form: the connectionless mcp/message is unknown, mcp/connect is served
          if (method === "mcp/message" && !params.connectionId) throw new acpUnstable.RequestError(-32601, "Method not found: mcp/message");
          if (method === "mcp/message" && params.method === "tools/call" && params.params?.name === "slow") {
            return holdCall(ctx, held, form, rctx.signal, slowText);
          }
          try {
            return await tunnel.legacy(method, params);
          } catch (e) {
            throw new acpUnstable.RequestError(e.code ?? -32603, e.message);
          }
        },
      },
    });
    let declaration;
    if (legacy) {
      declaration = { type: "acp", name: "editor-tools", serverId: "editor-tools-old" };
    } else {
      const reg = provider.registerServer(h.agent, {
        name: "editor-tools",
        handler: (mctx) =>
          mctx.method === "tools/call" && mctx.params?.name === "slow"
            ? holdCall(ctx, held, form, mctx.signal, { result: slowText })
            : tunnel.handler(mctx),
      });
      declaration = reg.declaration;
    }
    const { sessionId } = await h.newSession(ws, { mcpServers: [declaration] });
    await h.setMode(sessionId, "full_auto");
    const turn = h.prompt(sessionId, "Take your time", { timeout: 20000 });

    // mid-call: the editor holds the tools/call, the agent's mcp/message request is outstanding
    await h.waitUntil(() => held.length === 1, { timeout: 10000, label: "set-up: the editor received the slow tools/call" });
    const outer = h.wire.fromAgent.find(
      (m) => m.method === "mcp/message" && m.id !== undefined && m.params?.method === "tools/call" && m.params?.params?.name === "slow",
    );
    assert.ok(outer, "set-up: the tools/call went to the editor as an mcp/message request");
    if (legacy) assert.equal(typeof outer.params.connectionId, "string", "set-up: the older form (mcp/connect) is in use");
    else assert.equal(outer.params.serverId, declaration.serverId, "set-up: the connectionless form is in use");
    await h.waitForUpdate((n) => n.sessionId === sessionId && n.update.toolCallId === "call_slow" && n.update.status === "in_progress",
      { timeout: 5000, label: "set-up: the tool call is in progress" });
    assert.ok(!h.wire.fromAgent.some((m) => m.method === "$/cancel_request"), "set-up: nothing cancelled before session/cancel");

    const t0 = Date.now();
    await h.cancel(sessionId);
    const res = await withTimeout(turn, 3000, "session/prompt after session/cancel");
    assert.equal(res.stopReason, "cancelled", "the turn cancelled mid-call ends with stopReason cancelled");

    // the promise: the outstanding mcp/message is cancelled in the editor, by its id
    const promise = `promise: a turn cancelled (session/cancel) mid-call to an editor MCP server (MCP-over-ACP, ${form}) ` +
      `sends the editor $/cancel_request for the outstanding mcp/message request (id ${JSON.stringify(outer.id)})`;
    const sameId = (m) => m.method === "$/cancel_request" && JSON.stringify(m.params?.requestId) === JSON.stringify(outer.id);
    try {
      await h.waitUntil(() => h.wire.fromAgent.find(sameId), { timeout: Math.max(500, 3000 - (Date.now() - t0)), label: "$/cancel_request" });
    } catch {
      const got = h.wire.fromAgent.filter((m) => m.method === "$/cancel_request").map((m) => m.params);
      assert.fail(`${promise}; within 3 s of session/cancel it sent $/cancel_request for ${JSON.stringify(got)}`);
    }
    await h.waitUntil(() => held[0].aborted, { timeout: 2000, label: "the editor's handler saw the abort" });
    if (legacy) {
      assert.ok(
        h.wire.fromAgent.some((m) => m.method === "mcp/message" && m.id === undefined && m.params?.connectionId === outer.params.connectionId &&
          m.params?.method === "notifications/cancelled"),
        "older form: the inner notifications/cancelled reaches the editor's MCP connection too",
      );
    }

    const slow = toolCallStatuses(h, sessionId, "call_slow");
    assert.notEqual(slow.at(-1), "in_progress", `the tool call is not left in progress: ${slow}`);
    // the session goes on; the model is told the call was cancelled (not finished)
    fake.push({ text: "next turn works" });
    assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn", "the session is usable after the cancel");
    const told = toolResultText(fake.requests.at(-1), "call_slow");
    assert.match(told, /cancel/i, `the model is told call_slow was cancelled; it was told: ${told}`);
    assert.doesNotMatch(told, /slow done/, `the model is not told the call finished: ${told}`);
    if (!legacy) h.assertSchemaClean();
    else {
      // the older form's messages (mcp/connect, mcp/message {connectionId}) are not in the current schema
      const other = h.schemaErrors.filter((e) => !/"connectionId"|"mcp\/connect"/.test(e));
      assert.deepEqual(other, [], "no schema errors besides the older form's own messages");
    }
  }, { timeout: 60000 });
}

// ------------------------------------------------------------------------------------------
// lifecycle: orphans, session/close, required servers
// ------------------------------------------------------------------------------------------

/**
 * A marker that appears in the command line of every process of the scenario: the agent (run
 * through a symlink in a directory named after it) and its orphan guard (the same argv[0]), the
 * MCP server (an argument) and its grandchild (argv[0] `sleep-<marker>`). Leftovers are
 * SIGKILLed by pid at cleanup.
 */
function markedRun(ctx) {
  const marker = `ovmcp-${crypto.randomBytes(6).toString("hex")}`;
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${marker}-`)));
  const bin = path.join(dir, "openvaala");
  fs.symlinkSync(agentBinary(), bin);
  ctx.defer(() => {
    killMatching(marker);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const server = (name = "marked", m = marker) => ({ name, command: process.execPath, args: [MARKED, m, dir], env: [] });
  return { marker, dir, bin, server };
}

for (const how of ["stdin EOF", "client gone (stdin EOF + stdout closed)", "agent killed with SIGKILL"]) {
  scenario(`orphans: ${how} mid-call leaves no agent, MCP server or grandchild behind (within 2 s)`, async (ctx) => {
    const run = markedRun(ctx);
    const { ws, h } = await ctx.setup({
      script: [{ toolCalls: [{ id: "call_slow", name: "mcp__marked__slow", arguments: { ms: 60000 } }] }, { text: "never" }],
      agentOpts: { bin: run.bin },
    });
    const { sessionId } = await h.newSession(ws, { mcpServers: [run.server()] });
    await h.setMode(sessionId, "full_auto");
    const turn = h.prompt(sessionId, "Take your time", { timeout: 90000 });
    turn.catch(() => {});
    // mid-call: the tool call is running and the server has entered the slow tool
    await h.waitUntil(() => fs.existsSync(path.join(run.dir, "slow-started")), { timeout: 15000, label: "the slow tool started" });
    // Set-up: what has to be running for the scenario to mean anything (how the agent guards
    // against orphans, e.g. a helper process of its own, is not part of the promise).
    const cmdlines = describePids(pgrep(run.marker));
    assert.ok(pgrep(run.marker).includes(h.pid), `set-up: the agent ${h.pid} is found by the marker: ${cmdlines}`);
    assert.match(cmdlines, new RegExp(`sleep-${run.marker} 300`), "set-up: the MCP server's grandchild is running");
    assert.match(cmdlines, new RegExp(`marked-server\\.mjs ${run.marker}`), "set-up: the MCP server is running");
    // (the update may still be on its way when the server has already started the call)
    await h.waitForUpdate((n) => n.sessionId === sessionId && n.update.toolCallId === "call_slow" && n.update.status === "in_progress",
      { timeout: 5000, label: "set-up: the tool call is in progress" });

    if (how === "stdin EOF") {
      h.child.stdin.end();
    } else if (how === "agent killed with SIGKILL") {
      process.kill(h.pid, "SIGKILL");  // no code of ours runs: the guard does the cleaning up
    } else {
      h.child.stdin.destroy();
      h.child.stdout.destroy();
    }
    await assertProcessesGone(() => pgrep(run.marker), {
      within: 2000,
      promise: `after ${how} mid-call, nothing the agent started outlives it (the agent, anything it runs, the MCP server and its grandchild are gone within 2 s)`,
    });
    const exit = await Promise.race([h.exited, sleep(500).then(() => null)]);
    assert.ok(exit, "the agent exited");
    if (how !== "agent killed with SIGKILL") assert.equal(exit.signal, null, `the agent exited by itself: ${JSON.stringify(exit)}`);
  }, { timeout: 60000 });
}

scenario("session/close stops that session's stdio MCP server and its grandchild; other sessions keep theirs", async (ctx) => {
  const run = markedRun(ctx);
  const other = `${run.marker}-other`;
  const { fake, ws, h } = await ctx.setup({
    script: [{ toolCalls: [{ id: "call_pid", name: "mcp__marked__pid", arguments: {} }] }, { text: "got the pid" }],
  });
  const a = await h.newSession(ws, { mcpServers: [run.server()] });
  const b = await h.newSession(ws, { mcpServers: [run.server("marked", other)] });
  await h.setMode(a.sessionId, "full_auto");
  assert.equal((await h.prompt(a.sessionId, "What is the server's pid?")).stopReason, "end_turn");
  const [serverPid, grandchildPid] = toolMessage(fake.requests[1], "call_pid", "mcp__marked__pid").split(" ").map(Number);
  const ours = pgrep(run.marker).filter((p) => !pgrep(other).includes(p));
  assert.deepEqual([...ours].sort(), [serverPid, grandchildPid].sort(), `session A's server and grandchild: ${describePids(ours)}`);
  await h.waitUntil(() => pgrep(other).length === 2, { timeout: 10000, label: "session B's server and grandchild running" });
  const otherPids = pgrep(other);

  assert.deepEqual(await h.request("session/close", { sessionId: a.sessionId }), {});
  await assertProcessesGone(() => [serverPid, grandchildPid].filter((p) => pgrep(run.marker).includes(p)), {
    within: 2000,
    promise: "session/close stops the session's stdio MCP server and its grandchild (within 2 s)",
  });
  assert.deepEqual(pgrep(other).sort(), otherPids.sort(), "session B's server is untouched");
  assert.equal(h.exitInfo, null, "the agent keeps running");
  // the closed session is gone; session B still reaches its own server
  const e = await expectRpcError(h.prompt(a.sessionId, "hello?"), "prompt on the closed session");
  assert.match(e.message, new RegExp(a.sessionId));
  fake.push([{ toolCalls: [{ id: "call_pid_b", name: "mcp__marked__pid", arguments: {} }] }, { text: "B ok" }]);
  await h.setMode(b.sessionId, "full_auto");
  assert.equal((await h.prompt(b.sessionId, "And yours?")).stopReason, "end_turn");
  const [serverB, grandchildB] = toolMessage(fake.requests[3], "call_pid_b", "mcp__marked__pid").split(" ").map(Number);
  assert.deepEqual([serverB, grandchildB].sort(), otherPids.sort(), "session B's call went to session B's server");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("session/close mid-call: the turn ends cancelled, the call fails, the server and grandchild are gone within 2 s", async (ctx) => {
  const run = markedRun(ctx);
  const { ws, h } = await ctx.setup({
    script: [{ toolCalls: [{ id: "call_slow", name: "mcp__marked__slow", arguments: { ms: 60000 } }] }, { text: "never" }],
  });
  const { sessionId } = await h.newSession(ws, { mcpServers: [run.server()] });
  await h.setMode(sessionId, "full_auto");
  const turn = h.prompt(sessionId, "Take your time", { timeout: 60000 });
  turn.catch(() => {});
  await h.waitUntil(() => fs.existsSync(path.join(run.dir, "slow-started")), { timeout: 15000, label: "the slow tool started" });
  const before = pgrep(run.marker);
  assert.equal(before.length, 2, `server and grandchild: ${describePids(before)}`);
  const t0 = Date.now();
  assert.deepEqual(await h.request("session/close", { sessionId }), {});
  assert.equal((await turn).stopReason, "cancelled", "session/close mid-call ends the turn cancelled");
  const slow = toolCallsById(h, sessionId).get("call_slow");
  assert.equal(slow.at(-1).status, "failed", JSON.stringify(slow));
  await assertProcessesGone(() => pgrep(run.marker), {
    within: Math.max(0, 2000 - (Date.now() - t0)),
    promise: "session/close mid-call stops the session's MCP server and its grandchild (within 2 s)",
  });
  assert.equal(h.exitInfo, null, "the agent keeps running");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("session/close SIGKILLs a stdio MCP server that ignores SIGTERM and stdin EOF: none is left within 3 s", async (ctx) => {
  const run = markedRun(ctx);
  const { fake, ws, h } = await ctx.setup({
    script: [{ toolCalls: [{ id: "call_pid", name: "mcp__marked__pid", arguments: {} }] }, { text: "got the pid" }],
  });
  const stubborn = { ...run.server(), env: [{ name: "MARKED_IGNORE_TERM", value: "1" }] };
  const { sessionId } = await h.newSession(ws, { mcpServers: [stubborn] });
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "What is the server's pid?")).stopReason, "end_turn");
  const [serverPid, grandchildPid] = toolResultText(fake.requests[1], "call_pid").split(" ").map(Number);
  const running = pgrep(run.marker);
  assert.ok(running.includes(serverPid) && running.includes(grandchildPid), `set-up: the server and its grandchild run: ${describePids(running)}`);
  const ignored = fs.readFileSync(`/proc/${serverPid}/status`, "utf8").match(/^SigCgt:\s*([0-9a-f]+)/m);
  assert.ok(ignored && (BigInt(`0x${ignored[1]}`) & (1n << 14n)), "set-up: the server handles (ignores) SIGTERM itself");

  assert.deepEqual(await h.request("session/close", { sessionId }), {});
  await assertProcessesGone(() => pgrep(run.marker), {
    within: 3000,
    promise: "session/close ends a stdio MCP server that ignores SIGTERM (SIGKILL after a grace period): no process of it is left",
  });
  assert.equal(h.exitInfo, null, "the agent keeps running");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("required server in mcp_servers/ that cannot start: session/prompt fails with a JSON-RPC error naming it", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "should not be asked" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, {
    "mcp_servers/broken-tools.yaml":
      "id: broken-tools\n" +
      "type: stdio\n" +
      "command: /nonexistent/openvaala-test-mcp-server\n" +
      "required: true\n" +
      "startup_timeout_seconds: 5\n",
  });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const e = await expectRpcError(h.prompt(sessionId, "hi", { timeout: 20000 }), "session/prompt");
  assert.equal(e.code, -32603, `an internal error: ${JSON.stringify(e)}`);
  assert.match(e.message, /required MCP server 'broken-tools'/);
  assert.match(e.message, /\/nonexistent\/openvaala-test-mcp-server/, "the reason names the command");
  assert.equal(fake.requests.length, 0, "the model was never called");
  assert.equal(h.exitInfo, null, "the agent keeps running");
  h.assertSchemaClean();
}, { timeout: 60000 });
