// The MCP-over-ACP relay against @modelcontextprotocol/server-everything (stdio and Streamable
// HTTP), with the ACP SDK's own McpOverAcpCaller playing the agent on an in-process connection.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { McpHub, McpRelay, stripBindingMeta } from "../src/core/mcpRelay.js";
import type { McpServerConfig } from "../src/core/mcpConfig.js";
import { EVERYTHING, sleep } from "./util.js";


function everythingStdio(name = "everything"): McpServerConfig {
  return { type: "stdio", name, command: process.execPath, args: [EVERYTHING, "stdio"], env: {} };
}

/** Client app (the extension: provider) <-> agent app (the caller) in-process. */
async function pair(hub: McpHub) {
  const provider = new acp.McpOverAcpProvider();
  const caller = new acp.McpOverAcpCaller({ clientInfo: { name: "fake-agent", version: "1" } });
  let agentCtx: acp.AgentContext | undefined;
  let declared: acp.McpServer[] = [];
  const agentApp = acp
    .agent({ name: "fake-agent" })
    .onNotification(acp.methods.agent.mcp.message, caller.handleNotification)
    .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { mcpCapabilities: { acp: true } } as acp.AgentCapabilities }))
    .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
      declared = params.mcpServers;
      agentCtx = client;
      return { sessionId: "s1" };
    });
  const clientApp = acp.client({ name: "ext" }).onRequest(acp.methods.client.mcp.message, provider.handleRequest);
  const conn = clientApp.connect(agentApp);
  await conn.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const mcpServers = hub.register(provider, conn.agent);
  await conn.agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers });
  return { conn, caller, agent: () => agentCtx!, declared: () => declared };
}

test("stripBindingMeta removes only the binding's _meta keys", () => {
  assert.deepEqual(stripBindingMeta({ a: 1, _meta: { "io.modelcontextprotocol/protocolVersion": "x" } }), { a: 1 });
  assert.deepEqual(stripBindingMeta({ _meta: { progressToken: 3, "io.modelcontextprotocol/clientInfo": {} } }), { _meta: { progressToken: 3 } });
});

test("relay over MCP-over-ACP to server-everything (stdio): discover, tools/list, tools/call, inner error", { timeout: 20_000 }, async () => {
  const hub = new McpHub([everythingStdio()]);
  const p = await pair(hub);
  try {
    const decl = p.declared();
    assert.equal(decl.length, 1);
    const d = decl[0] as { type: string; name: string; serverId: string };
    assert.equal(d.type, "acp");
    assert.equal(d.name, "everything");
    assert.ok(d.serverId);

    const disc = await p.caller.request(p.agent(), d.serverId, "server/discover", {});
    assert.ok("result" in disc, JSON.stringify(disc));
    const info = (disc as { result: { serverInfo: { name: string }; capabilities: { tools?: unknown } } }).result;
    assert.ok(info.capabilities.tools, "tools capability relayed");
    assert.match(info.serverInfo.name, /everything/i);

    const list = await p.caller.request(p.agent(), d.serverId, "tools/list", {});
    assert.ok("result" in list);
    const names = ((list as { result: { tools: { name: string }[] } }).result.tools ?? []).map((t) => t.name);
    assert.ok(names.includes("echo"), `tools: ${names}`);

    const call = await p.caller.request(p.agent(), d.serverId, "tools/call", { name: "echo", arguments: { message: "through the tunnel" } });
    assert.ok("result" in call, JSON.stringify(call));
    const text = (call as { result: { content: { type: string; text: string }[] } }).result.content[0]!.text;
    assert.equal(text, "Echo: through the tunnel");

    const bad = await p.caller.request(p.agent(), d.serverId, "no/such/method", {});
    assert.ok("error" in bad, `an unknown inner method is an inner MCP error: ${JSON.stringify(bad)}`);
    assert.equal((bad as { error: { code: number } }).error.code, -32601);

    await assert.rejects(p.caller.request(p.agent(), "no-such-server", "tools/list", {}), (e: { code?: number }) => e.code === -33001);
  } finally {
    p.conn.close();
    await hub.dispose();
  }
});

test("legacy mcp/connect + mcp/message{connectionId} + mcp/disconnect on the same relay", { timeout: 20_000 }, async () => {
  const hub = new McpHub([everythingStdio("ev2")]);
  const router = hub.legacyRouter();
  try {
    const relay = hub.relay("ev2")!;
    const [serverId] = [...(hub as unknown as { relays: Map<string, McpRelay> }).relays.keys()];
    const { connectionId } = router.connect({ serverId: serverId! });
    const init = (await router.message({ connectionId, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } })) as { serverInfo: unknown };
    assert.ok(init.serverInfo);
    const r = (await router.message({ connectionId, method: "tools/call", params: { name: "get-sum", arguments: { a: 2, b: 3 } } })) as { content: { text: string }[] };
    assert.match(r.content[0]!.text, /5/);
    assert.deepEqual(router.disconnect({ connectionId }), {});
    await assert.rejects(router.message({ connectionId, method: "tools/list" }), (e: { code?: number }) => e.code === -33001);
    assert.equal(relay.name, "ev2");
  } finally {
    await hub.dispose();
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

test("relay to server-everything over Streamable HTTP", { timeout: 20_000 }, async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
  try {
    // wait until it listens
    for (let i = 0; i < 100; i++) {
      const ok = await new Promise<boolean>((r) => {
        const s = net.connect(port, "127.0.0.1", () => {
          s.end();
          r(true);
        });
        s.on("error", () => r(false));
      });
      if (ok) break;
      await sleep(100);
    }
    const relay = new McpRelay({ type: "http", name: "ev-http", url: `http://127.0.0.1:${port}/mcp`, headers: {} });
    try {
      const r = (await relay.call("tools/call", { name: "echo", arguments: { message: "via http" } })) as { content: { text: string }[] };
      assert.equal(r.content[0]!.text, "Echo: via http");
    } finally {
      await relay.close();
    }
  } finally {
    child.kill("SIGKILL");
  }
});
