// MCP beyond tools, end to end through `openvaala acp` with the official ACP SDK as the editor:
// - elicitation: server-everything's form and URL questions reach the editor as ACP
//   elicitation/create scoped to the session and the running tool call; accept (with content),
//   decline and cancel go back to the server unchanged. An editor without the capability: the
//   server is not offered elicitation, and a server that asks anyway is declined at once.
// - prompts: each MCP prompt is an available command /mcp__<id>__<prompt> (arguments as the
//   hint); typed with words, it fills the arguments in order and its messages are the user's
//   turn as the model receives it; notifications/prompts/list_changed refreshes the commands.
// - resources: list_mcp_resources / read_mcp_resource (Codex's shapes) called by the model, and
//   a resource_link the editor attaches that a server lists is read into the model's request.
// Servers: @modelcontextprotocol/server-everything and tests/fixtures/mcp/asking-server.mjs (SDK).
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SLACK, DEFAULT_CLIENT_CAPABILITIES, scenario, toolNames, toolResultText, userText } from "./harness.mjs";
import { EVERYTHING } from "../fixtures/mcp/everything.mjs";

const ASKING = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp/asking-server.mjs");
const everything = { name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] };
const asking = { name: "asking", command: process.execPath, args: [ASKING], env: [] };
const ELICITING = { ...DEFAULT_CLIENT_CAPABILITIES, elicitation: { form: {}, url: {} } };

/** An agent whose editor answers elicitation/create with `answer(params)`. */
async function eliciting(ctx, script, answer, { clientCapabilities = ELICITING } = {}) {
  return ctx.setup({
    script,
    agentOpts: {
      clientCapabilities,
      permission: "allow_once",
      onRequest: async (method, params) => {
        if (method !== "elicitation/create") throw new Error(`unexpected client request ${method}`);
        return answer(params);
      },
    },
  });
}

const call = (id, name, args = {}) => ({ text: "", toolCalls: [{ id, name, arguments: args }] });
const commandsOf = (h, sessionId) =>
  (h.updatesOf(sessionId, "available_commands_update").at(-1)?.availableCommands ?? []);

async function waitForCommand(h, sessionId, name) {
  await h.waitUntil(() => commandsOf(h, sessionId).some((c) => c.name === name), {
    timeout: 15000, label: `available command ${name}`,
  });
  return commandsOf(h, sessionId).find((c) => c.name === name);
}

// ------------------------------------------------------------------------------------------
// elicitation
// ------------------------------------------------------------------------------------------

scenario("elicitation: a form question reaches the editor scoped to the tool call; accept, decline and cancel go back unchanged", async (ctx) => {
  const answers = [
    { action: "accept", content: { name: "Ada Lovelace", check: true, integer: 7 } },
    { action: "decline" },
    { action: "cancel" },
  ];
  const script = [];
  for (let i = 0; i < answers.length; i++) {
    script.push(call(`call_ask${i}`, "mcp__everything__trigger-elicitation-request"), { text: `done ${i}` });
  }
  let n = 0;
  const { fake, ws, h } = await eliciting(ctx, script, () => answers[n++]);
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything] });
  for (let i = 0; i < answers.length; i++) {
    const res = await h.prompt(sessionId, `ask ${i}`, { timeout: 60000 });
    assert.equal(res.stopReason, "end_turn");
  }
  assert.ok(toolNames(fake.requests[0]).includes("mcp__everything__trigger-elicitation-request"),
    "the server offered its elicitation tool: openvaala declared MCP elicitation because the editor can answer");
  const asked = h.requestsOf("elicitation/create");
  assert.equal(asked.length, 3, "one elicitation/create per question");
  asked.forEach((r, i) => {
    assert.equal(r.params.sessionId, sessionId, "scoped to the session");
    assert.equal(r.params.toolCallId, `call_ask${i}`, "scoped to the running tool call");
    assert.equal(r.params.mode, "form");
    assert.equal(r.params.message, "Please provide inputs for the following fields:");
    assert.equal(r.params.requestedSchema.type, "object");
    assert.deepEqual(r.params.requestedSchema.required, ["name"], "the server's schema, unchanged");
    assert.equal(r.params.requestedSchema.properties.name.description, "Your full, legal name");
  });
  const result = (i) => toolResultText(fake.requests[2 * i + 1], `call_ask${i}`);
  assert.match(result(0), /User provided the requested information/, "accept reached the server");
  assert.match(result(0), /- Name: Ada Lovelace/, "the content reached the server unchanged");
  assert.match(result(0), /- Favorite Integer: 7/);
  assert.match(result(1), /User declined/, "decline reached the server");
  assert.match(result(2), /cancelled/i, "cancel reached the server");
  h.assertSchemaClean();
}, { timeout: 120000 });

scenario("elicitation: a URL question reaches the editor in url mode with its id", async (ctx) => {
  const script = [
    call("call_url", "mcp__everything__trigger-url-elicitation", { url: "https://example.com/sign-in", elicitationId: "el-1" }),
    { text: "ok" },
  ];
  const { fake, ws, h } = await eliciting(ctx, script, () => ({ action: "accept" }));
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything] });
  assert.equal((await h.prompt(sessionId, "sign in", { timeout: 60000 })).stopReason, "end_turn");
  const [r] = h.requestsOf("elicitation/create");
  assert.ok(r, "the URL question reached the editor");
  assert.equal(r.params.mode, "url");
  assert.equal(r.params.url, "https://example.com/sign-in");
  assert.equal(r.params.elicitationId, "el-1");
  assert.equal(r.params.toolCallId, "call_url");
  assert.match(toolResultText(fake.requests[1], "call_url"), /User completed the URL elicitation flow/);
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("elicitation: a server's notifications/elicitation/complete reaches the editor as elicitation/complete", async (ctx) => {
  const script = [call("call_url", "mcp__asking__ask_url"), { text: "ok" }];
  const { fake, ws, h } = await eliciting(ctx, script, () => ({ action: "accept" }));
  const { sessionId } = await h.newSession(ws, { mcpServers: [asking] });
  assert.equal((await h.prompt(sessionId, "sign in", { timeout: 60000 })).stopReason, "end_turn");
  assert.equal(toolResultText(fake.requests[1], "call_url"), 'answer: {"action":"accept"}');
  await h.waitUntil(() => h.wire.fromAgent.some((m) => m.method === "elicitation/complete"), { label: "elicitation/complete" });
  const done = h.wire.fromAgent.filter((m) => m.method === "elicitation/complete");
  assert.deepEqual(done.map((m) => m.params), [{ elicitationId: "url-1" }]);
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("elicitation: cancelling the turn while the editor asks withdraws the question from the editor", async (ctx) => {
  const script = [call("call_ask", "mcp__asking__ask"), { text: "never" }];
  const { fake, ws, h } = await eliciting(ctx, script, () => new Promise(() => {})); // the user never answers
  const { sessionId } = await h.newSession(ws, { mcpServers: [asking] });
  const turn = h.prompt(sessionId, "ask", { timeout: 60000 });
  const asked = await h.waitForRequest("elicitation/create", () => true, { timeout: 30000 });
  assert.equal(asked.params.toolCallId, "call_ask");
  await h.cancel(sessionId);
  assert.equal((await turn).stopReason, "cancelled");
  const askId = h.wire.transcript.find((e) => e.msg?.method === "elicitation/create")?.msg.id;
  const cancels = h.wire.fromAgent.filter((m) => m.method === "$/cancel_request").map((m) => m.params.requestId);
  assert.ok(cancels.includes(askId), `the editor's question was withdrawn ($/cancel_request ${askId}); got ${JSON.stringify(cancels)}`);
  assert.equal(fake.requests.length, 1, "the turn ended without another model request");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("elicitation: without the editor's capability the server is not offered it, and a question is declined at once", async (ctx) => {
  const script = [call("call_ask", "mcp__asking__ask"), { text: "the turn went on" }];
  const { fake, ws, h } = await eliciting(ctx, script, () => assert.fail("the editor must not be asked"), {
    clientCapabilities: DEFAULT_CLIENT_CAPABILITIES,
  });
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything, asking] });
  const res = await h.prompt(sessionId, "ask", { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn", "the turn continues");
  assert.ok(!toolNames(fake.requests[0]).includes("mcp__everything__trigger-elicitation-request"),
    "no MCP elicitation capability declared: server-everything keeps its elicitation tool to itself");
  assert.deepEqual(h.requestsOf("elicitation/create"), [], "nothing was sent to an editor that cannot answer");
  const text = toolResultText(fake.requests[1], "call_ask");
  const m = text.match(/^answer: (\{.*\}) after (\d+) ms$/);
  assert.ok(m, `the server got an answer: ${text}`);
  assert.deepEqual(JSON.parse(m[1]), { action: "decline" }, "a clean decline");
  assert.ok(Number(m[2]) < 2000 * SLACK, `declined at once (${m[2]} ms)`);
  assert.equal(h.answerOf(sessionId), "the turn went on");
  h.assertSchemaClean();
}, { timeout: 60000 });

// ------------------------------------------------------------------------------------------
// prompts as slash commands
// ------------------------------------------------------------------------------------------

scenario("prompts: /mcp__everything__args-prompt is an available command; its words fill the arguments and the messages reach the model", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ text: "Sunny." }] });
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything] });
  const cmd = await waitForCommand(h, sessionId, "mcp__everything__args-prompt");
  assert.equal(cmd.input?.hint, "<city> [state]", "the arguments are the input hint");
  assert.match(cmd.description, /two arguments/);
  assert.ok(commandsOf(h, sessionId).some((c) => c.name === "mcp__everything__simple-prompt"), "every prompt is a command");
  const res = await h.prompt(sessionId, "/mcp__everything__args-prompt Paris Texas", { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn");
  const said = userText(fake.requests[0]);
  assert.match(said, /What's weather in Paris, Texas\?/, "the prompt's messages are the user's turn");
  assert.doesNotMatch(said, /\/mcp__everything__args-prompt/, "the command itself is replaced");
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("prompts: a missing required argument is refused with the usage; list_changed refreshes the commands", async (ctx) => {
  const script = [call("call_add", "mcp__asking__add_prompt", { name: "later" }), { text: "added" }, { text: "used" }];
  const { fake, ws, h } = await ctx.setup({ script, agentOpts: { permission: "allow_once" } });
  const { sessionId } = await h.newSession(ws, { mcpServers: [asking] });
  const greet = await waitForCommand(h, sessionId, "mcp__asking__greet");
  assert.equal(greet.input?.hint, "<who> [mood]");
  assert.equal((await h.prompt(sessionId, "/mcp__asking__greet")).stopReason, "end_turn");
  assert.equal(fake.requests.length, 0, "a prompt missing its required argument never reaches the model");
  assert.match(JSON.stringify(h.updatesOf(sessionId)), /needs its argument 'who'/, "the user is told which argument is missing");
  assert.equal((await h.prompt(sessionId, "add a prompt", { timeout: 60000 })).stopReason, "end_turn");
  await waitForCommand(h, sessionId, "mcp__asking__later");
  assert.equal((await h.prompt(sessionId, "/mcp__asking__later")).stopReason, "end_turn");
  assert.match(userText(fake.requests.at(-1)), /This is the later prompt\./, "the new prompt works as a command");
  h.assertSchemaClean();
}, { timeout: 60000 });

// ------------------------------------------------------------------------------------------
// resources
// ------------------------------------------------------------------------------------------

const FEATURES = "demo://resource/static/document/features.md";

scenario("resources: the model lists and reads them with list_mcp_resources and read_mcp_resource (Codex's shapes)", async (ctx) => {
  const script = [
    call("call_list", "list_mcp_resources", {}),
    call("call_page", "list_mcp_resources", { server: "everything" }),
    call("call_read", "read_mcp_resource", { server: "everything", uri: FEATURES }),
    call("call_bad", "list_mcp_resources", { cursor: "x" }),
    { text: "read" },
  ];
  const { fake, ws, h } = await ctx.setup({ script });
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything] });
  assert.equal((await h.prompt(sessionId, "what resources are there?", { timeout: 60000 })).stopReason, "end_turn");
  for (const t of ["list_mcp_resources", "read_mcp_resource"]) assert.ok(toolNames(fake.requests[0]).includes(t), `${t} offered`);
  const all = JSON.parse(toolResultText(fake.requests[1], "call_list"));
  const doc = all.resources.find((r) => r.uri === FEATURES);
  assert.ok(doc, `the listing has ${FEATURES}`);
  assert.equal(doc.server, "everything", "each resource names its server");
  assert.equal(doc.name, "features.md");
  assert.equal(all.server, undefined, "listing every server names none");
  const page = JSON.parse(toolResultText(fake.requests[2], "call_page"));
  assert.equal(page.server, "everything");
  assert.ok(page.resources.some((r) => r.uri === FEATURES));
  const read = JSON.parse(toolResultText(fake.requests[3], "call_read"));
  assert.equal(read.server, "everything");
  assert.equal(read.uri, FEATURES);
  assert.equal(read.contents[0].uri, FEATURES);
  assert.match(read.contents[0].text, /\S/, "the resource's text");
  assert.match(toolResultText(fake.requests[4], "call_bad"), /cursor can only be used when a server is specified/);
  h.assertSchemaClean();
}, { timeout: 60000 });

scenario("resources: a resource_link the editor attaches that a server lists is read into the model's request", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ text: "seen" }] });
  const { sessionId } = await h.newSession(ws, { mcpServers: [everything] });
  await waitForCommand(h, sessionId, "mcp__everything__simple-prompt"); // the server is up
  const res = await h.prompt(sessionId, [
    { type: "text", text: "Summarise this" },
    { type: "resource_link", uri: FEATURES, name: "features.md" },
  ], { timeout: 60000 });
  assert.equal(res.stopReason, "end_turn");
  const said = userText(fake.requests[0]);
  assert.match(said, new RegExp(`<context ref="${FEATURES}" server="everything">\\n[^]*\\S[^]*\\n</context>`), `the resource's contents reach the model: ${said.slice(0, 500)}`);
  h.assertSchemaClean();
}, { timeout: 60000 });
