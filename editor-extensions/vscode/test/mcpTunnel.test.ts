// The AgentConnection's mcp/message dispatch (current and legacy forms) end to end: an SDK agent
// process calls server-everything's echo through the extension's relay.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AgentConnection, type ClientHost } from "../src/core/acpClient.js";
import { McpHub } from "../src/core/mcpRelay.js";
import { EVERYTHING, EXT_ROOT } from "./util.js";

const AGENT = path.join(EXT_ROOT, "test", "fixtures", "sdk-agent.mjs");

for (const legacy of [false, true]) {
  test(`tunnel through AgentConnection (${legacy ? "legacy mcp/connect" : "mcp/message serverId"})`, { timeout: 20_000 }, async () => {
    let text = "";
    const host: ClientHost = {
      onSessionUpdate: (n) => {
        if (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text") text += n.update.content.text;
      },
      requestPermission: async () => ({ outcome: { outcome: "cancelled" } }),
      readTextFile: async () => ({ content: "" }),
      writeTextFile: async () => ({}),
    };
    const hub = new McpHub([{ type: "stdio", name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: {} }]);
    const router = hub.legacyRouter();
    const provider = new acp.McpOverAcpProvider();
    const conn = await AgentConnection.start({
      command: process.execPath,
      args: legacy ? [AGENT, "--legacy"] : [AGENT],
      cwd: EXT_ROOT,
      host,
      mcpProvider: provider,
      legacyMcp: () => router,
    });
    try {
      await conn.initialize();
      assert.equal(conn.acceptsAcpMcp, true);
      const servers = hub.register(provider, conn.agent);
      const s = await conn.newSession(EXT_ROOT, servers);
      const r = await conn.prompt(s.sessionId, "ping through");
      assert.equal(r.stopReason, "end_turn");
      assert.equal(text, "servers=everything Echo: ping through");
    } finally {
      await conn.stop();
      await hub.dispose();
    }
  });
}
