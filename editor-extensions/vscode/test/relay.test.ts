// The MCP relay against a small MCP stdio server (test/fixtures/mcp-server.mjs): what the agent's
// inner MCP requests are answered, what the real server is sent, errors, progress, cancellation,
// reconnection, and the legacy connection form.
import { test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { McpHub, McpRelay, LegacyMcpRouter, stripBindingMeta } from "../src/core/mcpRelay.js";
import type { StdioServerConfig } from "../src/core/mcpConfig.js";
import { EXT_ROOT, waitUntil } from "./util.js";

// these tests wait on processes: a hang fails the test in 10 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 10_000 }, fn);

const SERVER = path.join(EXT_ROOT, "test", "fixtures", "mcp-server.mjs");

function stdio(name = "fx", over: Partial<StdioServerConfig> = {}): StdioServerConfig {
  return { type: "stdio", name, command: process.execPath, args: [SERVER], env: {}, ...over };
}
const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

test("discover/initialize answer the real server's identity, capabilities and instructions", async () => {
  const lines: string[] = [];
  const relay = new McpRelay(stdio(), { log: (l) => lines.push(l), clientInfo: { name: "relay-client", version: "9" } });
  try {
    const d = await relay.discover();
    assert.equal(d.protocolVersion, acp.MCP_PROTOCOL_VERSION, "without a version the binding's version is answered");
    assert.deepEqual(d.supportedVersions, [acp.MCP_PROTOCOL_VERSION], "the supported version is the binding's");
    assert.deepEqual(d.serverInfo, { name: "fixture-mcp", version: "1.0.0" }, "the real server's identity");
    assert.ok((d.capabilities as { tools?: unknown }).tools, "the real server's capabilities");
    assert.equal(d.instructions, "Use echo to echo.", "the real server's instructions");
    const init = (await relay.call("initialize", { protocolVersion: "2025-06-18" })) as Record<string, unknown>;
    assert.equal(init.protocolVersion, "2025-06-18", "initialize answers the version asked for");
    const disc = (await relay.call("server/discover", {}, { protocolVersion: "2026-07-28" })) as Record<string, unknown>;
    assert.equal(disc.protocolVersion, "2026-07-28", "server/discover answers the binding's version");
    assert.deepEqual(await relay.call("ping", undefined), {}, "ping is answered");
    assert.deepEqual(await relay.call("notifications/initialized", {}), {}, "notifications are acknowledged, not forwarded");
    assert.ok(lines.some((l) => l.startsWith("[mcp fx] connected: ") && l.includes("fixture-mcp")), `the log says which server connected: ${lines.join("|")}`);
    await waitUntil(() => lines.some((l) => l === "[mcp fx] mcp-server up"), 3000, "the server's stderr in the log");
    assert.deepEqual(relay.stderrTail, ["mcp-server up\n"], "the server's stderr is kept for error reports");
    assert.equal(relay.name, "fx");
  } finally {
    await relay.close();
  }
  const plain = new McpRelay(stdio("plain", { args: [SERVER, "--no-instructions"] }));
  try {
    assert.equal("instructions" in (await plain.discover()), false, "no instructions when the server has none");
  } finally {
    await plain.close();
  }
});

test("requests reach the real server in its folder with its env, without the binding's _meta; one connection is reused", async () => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovrelay-")));
  const relay = new McpRelay(stdio("fx", { cwd, env: { OV_MCP_ENV: "set" } }));
  try {
    const [a, b] = await Promise.all([relay.connect(), relay.connect()]);
    assert.equal(a, b, "concurrent connects share one connection");
    assert.equal(await relay.connect(), a, "later connects reuse it");
    const r = JSON.parse(textOf(await relay.call("tools/call", { name: "whoami", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "x", keep: 1 } })));
    assert.equal(r.cwd, cwd, "the server runs in its configured folder");
    assert.equal(r.env, "set", "with its configured env");
    assert.equal(r.meta.keep, 1, "the agent's own _meta is passed on");
    assert.equal(r.meta["io.modelcontextprotocol/protocolVersion"], undefined, "the binding's _meta is not");
    assert.equal(textOf(await relay.call("tools/call", { name: "echo", arguments: { message: "hi" } })), "Echo: hi", "tool calls are answered by the real server");
    const list = (await relay.call("tools/list", undefined)) as { tools: { name: string }[] };
    assert.ok(list.tools.some((t) => t.name === "echo"), "a request without params works");
  } finally {
    await relay.close();
  }
});

test("errors: an inner MCP error keeps its code and message; progress is passed on; a cancel or a timeout ends the request", async () => {
  const relay = new McpRelay(stdio(), { timeoutMs: 300 });
  try {
    await assert.rejects(
      relay.call("no/such/method", {}),
      (e: unknown) => e instanceof acp.McpProtocolError && e.code === -32601 && !/^MCP error/.test(e.message) && e.message.length > 0,
      "an inner error is an MCP protocol error with the server's code, without the SDK's 'MCP error N:' prefix",
    );
    const progress: unknown[] = [];
    assert.equal(textOf(await relay.call("tools/call", { name: "progress", arguments: {} }, { onProgress: (p) => progress.push(p) })), "done");
    assert.deepEqual(progress.map((p) => (p as { progress: number }).progress), [1, 2], "progress notifications reach the caller");
    const t0 = Date.now();
    await assert.rejects(relay.call("tools/call", { name: "slow", arguments: {} }), (e: unknown) => !(e instanceof acp.McpProtocolError) || (e as { code: number }).code === -32001, "a request past the timeout fails");
    assert.ok(Date.now() - t0 < 5000, "the timeout applies");
    const ac = new AbortController();
    const slow = relay.call("tools/call", { name: "slow", arguments: {} }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(slow, "a cancelled request fails");
  } finally {
    await relay.close();
  }
  const longer = new McpRelay(stdio(), { timeoutMs: 20000 });
  try {
    const t0 = Date.now();
    const ac = new AbortController();
    const p = longer.call("tools/call", { name: "slow", arguments: {} }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 500));
    ac.abort();
    await assert.rejects(p);
    assert.ok(Date.now() - t0 >= 500, "a configured timeout is not shorter than asked");
  } finally {
    await longer.close();
  }
});

test("a server that dies is reconnected on the next request; a closed relay refuses", async () => {
  const lines: string[] = [];
  const relay = new McpRelay(stdio(), { log: (l) => lines.push(l) });
  await relay.call("ping", undefined);
  await assert.rejects(relay.call("tools/call", { name: "crash", arguments: {} }), "a request to a dying server fails");
  await waitUntil(() => lines.includes("[mcp fx] connection closed"), 5000, "the closed connection in the log");
  assert.equal(textOf(await relay.call("tools/call", { name: "echo", arguments: { message: "back" } })), "Echo: back", "the next request reconnects");
  await relay.close();
  await assert.rejects(relay.connect(), /MCP server fx is stopped/, "a closed relay does not reconnect");
  await assert.rejects(relay.call("tools/list", {}), /is stopped/);
  const never = new McpRelay(stdio("never"));
  await never.close(); // closing an unconnected relay is fine
  const broken = new McpRelay(stdio("broken", { command: "/no/such/mcp-server" }));
  await assert.rejects(broken.connect(), "a server that cannot start fails the request");
  await assert.rejects(broken.connect(), "and is tried again on the next one");
  await broken.close();
});

test("stderr: the last 50 chunks are kept", async () => {
  const script = "for (let i = 0; i < 60; i++) process.stderr.write(`line ${i}\\n`); setTimeout(() => {}, 200);";
  const relay = new McpRelay({ type: "stdio", name: "noisy", command: process.execPath, args: ["-e", script], env: {} });
  await assert.rejects(relay.connect());
  await waitUntil(() => relay.stderrTail.join("").includes("line 59"), 3000, "stderr");
  assert.ok(relay.stderrTail.length <= 50, `at most 50 chunks kept (${relay.stderrTail.length})`);
  assert.ok(!relay.stderrTail.join("").includes("line 0\n") || relay.stderrTail.length < 50, "the oldest go first");
  await relay.close();
});

test("stripBindingMeta: only the binding's keys go; an emptied _meta goes too", () => {
  assert.equal(stripBindingMeta(undefined), undefined);
  const noMeta = { a: 1 };
  assert.equal(stripBindingMeta(noMeta), noMeta, "params without _meta are passed as they are");
  const odd = { _meta: "x" } as Record<string, unknown>;
  assert.equal(stripBindingMeta(odd), odd, "an odd _meta is left alone");
  const params = { a: 1, _meta: { "io.modelcontextprotocol/x": 1, other: 2 } };
  assert.deepEqual(stripBindingMeta(params), { a: 1, _meta: { other: 2 } });
  assert.deepEqual(params._meta, { "io.modelcontextprotocol/x": 1, other: 2 }, "the caller's params are not changed");
});

test("the legacy form: connect by serverId, acpId or id; messages and errors; disconnect", async () => {
  const hub = new McpHub([stdio("a"), stdio("b")]);
  try {
    assert.equal(hub.size, 2);
    const ids = [...(hub as unknown as { relays: Map<string, McpRelay> }).relays.keys()];
    assert.ok(ids.every((id) => /^vscode-[ab]-[0-9a-f]{8}$/.test(id)), `server ids name the server: ${ids}`);
    assert.equal(hub.relay(ids[1]!)!.name, "b", "a relay by id");
    assert.equal(hub.relay("a")!.name, "a", "a relay by name");
    assert.equal(hub.relay("zzz"), undefined);
    const router = hub.legacyRouter();
    const c1 = router.connect({ serverId: ids[0] });
    const c2 = router.connect({ acpId: ids[1] });
    const c3 = router.connect({ id: "a" });
    assert.match(c1.connectionId, /^conn-/, "connect answers a connection id");
    assert.notEqual(c1.connectionId, c3.connectionId, "each connect gets its own connection");
    assert.equal(textOf(await router.message({ connectionId: c2.connectionId, method: "tools/call", params: { name: "echo", arguments: { message: "legacy" } } })), "Echo: legacy", "messages go to the connected server");
    await assert.rejects(router.message({ connectionId: c1.connectionId, method: "no/such" }), (e: unknown) => e instanceof acp.RequestError && (e as { code: number }).code === -32601, "an inner error is an ACP error with the inner code");
    const ac = new AbortController();
    const slow = router.message({ connectionId: c1.connectionId, method: "tools/call", params: { name: "slow", arguments: {} } }, ac.signal);
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(slow, "a cancelled legacy message fails");
    assert.throws(() => router.connect({ serverId: "nope" }), (e: { code?: number; message?: string }) => e.code === acp.McpBindingErrorCode.serverUnavailable && e.message === "unknown MCP server nope", "an unknown server is unavailable");
    assert.throws(() => router.connect({}), /unknown MCP server $/, "no id at all is unavailable");
    assert.deepEqual(router.disconnect({ connectionId: c3.connectionId }), {});
    await assert.rejects(router.message({ connectionId: c3.connectionId, method: "ping" }), (e: { code?: number; message?: string }) => e.code === acp.McpBindingErrorCode.serverUnavailable && e.message === `unknown MCP connection ${c3.connectionId}`, "a disconnected connection is unavailable");
    const standalone = new LegacyMcpRouter(() => undefined);
    assert.throws(() => standalone.connect({ serverId: "x" }), /unknown MCP server x/);
  } finally {
    await hub.dispose();
  }
  await assert.rejects(hub.relay("a")!.connect(), /is stopped/, "dispose stops every relay");
});

test("registering on a second session of the same connection reuses the declarations; dispose unregisters", async () => {
  const hub = new McpHub([stdio("one")]);
  const provider = new acp.McpOverAcpProvider();
  const clientApp = acp.client({ name: "ext" }).onRequest(acp.methods.client.mcp.message, provider.handleRequest);
  const agentApp = acp.agent({ name: "agent" }).onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {} }));
  const conn = clientApp.connect(agentApp);
  try {
    const first = hub.register(provider, conn.agent);
    const second = hub.register(provider, conn.agent);
    assert.equal(first.length, 1);
    assert.deepEqual(second, first.map((d) => ({ type: "acp", name: (d as { name: string }).name, serverId: (d as { serverId: string }).serverId })), "the second session gets the same servers");
    assert.equal((first[0] as { type: string }).type, "acp");
    await hub.dispose();
    assert.doesNotThrow(() => hub.register(provider, conn.agent), "after dispose the servers can be registered again");
  } finally {
    conn.close();
    await hub.dispose();
  }
});
