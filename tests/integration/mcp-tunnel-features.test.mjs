// An MCP server the editor hosts and tunnels through ACP (McpOverAcpProvider, the stateless
// MCP-over-ACP form) has its prompts and resources used exactly as the same server over stdio:
// server/discover (that form's initialize) gives its capabilities, its prompts become
// /mcp__<id>__<prompt> commands and its resources reach the model through list_mcp_resources
// and read_mcp_resource. The official ACP SDK is the editor; the fake model records requests.
import assert from "node:assert/strict";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import { scenario, toolNames, toolResultText, userText } from "./harness.mjs";
import { makeTunnelServer } from "../fixtures/mcp/tunnel-server.mjs";

const commandsOf = (h, sessionId) =>
  (h.updatesOf(sessionId, "available_commands_update").at(-1)?.availableCommands ?? []);

scenario("MCP-over-ACP: an editor's tunnelled server has its prompt as a /mcp__ command and its resources as the model's tools", async (ctx) => {
  const tunnel = await makeTunnelServer({ features: true });
  ctx.defer(() => tunnel.close());
  const provider = new acpUnstable.McpOverAcpProvider();
  const { fake, ws, h } = await ctx.setup({
    script: [
      { text: "", toolCalls: [{ id: "call_read", name: "read_mcp_resource", arguments: { server: "editor-tools", uri: "editor://notes" } }] },
      { text: "Reviewed." },
    ],
    agentOpts: {
      onRequest: (method, params, rctx) => {
        if (method === "mcp/message") return provider.handleRequest(rctx);
        throw new acpUnstable.RequestError(-32601, `Method not found: ${method}`);
      },
    },
  });
  const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: tunnel.handler });
  const { sessionId } = await h.newSession(ws, { mcpServers: [reg.declaration] });
  await h.setMode(sessionId, "full_auto");
  await h.waitUntil(() => commandsOf(h, sessionId).some((c) => c.name === "mcp__editor-tools__review"), {
    timeout: 15000, label: `available command mcp__editor-tools__review; the editor was asked ${tunnel.calls.map((c) => c.method).join(", ")}`,
  });
  const cmd = commandsOf(h, sessionId).find((c) => c.name === "mcp__editor-tools__review");
  assert.equal(cmd.input?.hint, "<file>", "the prompt's argument is the hint");
  assert.match(cmd.description, /Review a file/);

  const res = await h.prompt(sessionId, "/mcp__editor-tools__review src/a.ts", { timeout: 30000 });
  assert.equal(res.stopReason, "end_turn");
  assert.match(userText(fake.requests[0]), /Please review src\/a\.ts \(from the editor's prompt\)/,
    "the editor's prompt, with its argument, is the user's turn");
  for (const t of ["list_mcp_resources", "read_mcp_resource"])
    assert.ok(toolNames(fake.requests[0]).includes(t), `${t} offered to the model; got ${toolNames(fake.requests[0]).join(", ")}`);
  const read = JSON.parse(toolResultText(fake.requests[1], "call_read"));
  assert.equal(read.server, "editor-tools");
  assert.equal(read.contents[0].text, "editor notes text", "the resource was read through the tunnel");
  const asked = h.wire.fromAgent.filter((m) => m.method === "mcp/message").map((m) => m.params.method);
  for (const m of ["server/discover", "prompts/list", "prompts/get", "resources/read"])
    assert.ok(asked.includes(m), `${m} went through mcp/message; sent ${asked.join(", ")}`);
  assert.ok(!asked.includes("initialize"), "the stateless form has no initialize");
  h.assertSchemaClean();
}, { timeout: 60000 });
