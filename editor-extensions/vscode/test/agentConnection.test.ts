// AgentConnection (the client side of one server process) against the scripted stand-in agent:
// what reaches the server for each call, how the server's requests reach the editor, and how the
// process is started, reported and stopped. No C++ binary needed.
import { test as nodeTest } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AgentConnection, DEFAULT_CLIENT_CAPABILITIES, type StartOptions } from "../src/core/acpClient.js";
import type { ManagedTerminal } from "../src/core/terminals.js";
import { LegacyMcpRouter } from "../src/core/mcpRelay.js";
import { RecordingHost, SCRIPTED_AGENT, agentLog, receivedOf, script, scriptedArgs } from "./scripted.js";
import { waitUntil } from "./util.js";

// these tests wait on processes: a hang fails the test in 10 s instead of stalling the run
const test = (name: string, fn: () => Promise<void> | void) => nodeTest(name, { timeout: 10_000 }, fn);

function tmp() {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ovac-")));
}

async function withAgent(
  opts: Partial<StartOptions> & { agent?: Parameters<typeof scriptedArgs>[0] },
  fn: (conn: AgentConnection, host: RecordingHost) => Promise<void>,
): Promise<void> {
  const host = (opts.host as RecordingHost | undefined) ?? new RecordingHost();
  const conn = await AgentConnection.start({ command: process.execPath, args: scriptedArgs(opts.agent), cwd: opts.cwd ?? os.tmpdir(), host, ...opts });
  try {
    await fn(conn, host);
  } finally {
    await conn.stop(500);
  }
}

test("initialize tells the server who we are and what the editor can do (fs, terminals)", async () => {
  await withAgent({}, async (conn) => {
    const r = await conn.initialize();
    assert.equal(conn.initializeResponse, r, "the initialize answer is kept");
    const [init] = await receivedOf(conn, "initialize");
    assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION, "initialize sends our protocol version");
    const { fs: fsCaps, terminal } = init.clientCapabilities;
    assert.deepEqual({ fs: fsCaps, terminal }, { fs: { readTextFile: true, writeTextFile: true }, terminal: true }, "the server is told the editor serves fs reads, writes and terminals");
    assert.deepEqual(init.clientCapabilities.session, { notices: {}, compaction: {} },
      "the server is told the chat shows notices and compactions as their own items");
    assert.deepEqual(DEFAULT_CLIENT_CAPABILITIES, { fs: fsCaps, terminal, session: init.clientCapabilities.session });
    assert.deepEqual(init.clientInfo, { name: "openvaala-vscode", version: "0.0.0" }, "without clientInfo the server sees openvaala-vscode 0.0.0");
  });
  await withAgent({ clientInfo: { name: "n", version: "9", title: "T" }, clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } } }, async (conn) => {
    await conn.initialize();
    const [init] = await receivedOf(conn, "initialize");
    assert.deepEqual(init.clientInfo, { name: "n", version: "9", title: "T" }, "the given clientInfo reaches the server");
    assert.deepEqual(init.clientCapabilities.fs, { readTextFile: true, writeTextFile: false }, "the given client capabilities reach the server");
    assert.ok(!init.clientCapabilities.terminal, "capabilities we did not give are not claimed");
  });
});

test("the server's capabilities decide session list, load and ACP-tunnelled MCP", async () => {
  await withAgent({ agent: { caps: {} } }, async (conn) => {
    assert.deepEqual(conn.capabilities, {}, "before initialize there are no capabilities");
    await conn.initialize();
    assert.equal(conn.supportsSessionList, false, "no sessionCapabilities.list: no session history");
    assert.equal(conn.supportsLoad, false, "no loadSession: sessions are not reloaded");
    assert.equal(conn.acceptsAcpMcp, false, "no mcpCapabilities.acp: MCP servers are not tunnelled");
  });
  await withAgent({ agent: { caps: { loadSession: true, sessionCapabilities: { list: {} }, mcpCapabilities: { acp: true } } } }, async (conn) => {
    await conn.initialize();
    assert.equal(conn.supportsSessionList, true, "sessionCapabilities.list: session history is offered");
    assert.equal(conn.supportsLoad, true, "loadSession: sessions can be reloaded");
    assert.equal(conn.acceptsAcpMcp, true, "mcpCapabilities.acp: MCP servers are tunnelled");
  });
});

test("session calls send exactly what the server needs", async () => {
  await withAgent({}, async (conn) => {
    await conn.initialize();
    const s = await conn.newSession("/work/a");
    await conn.newSession("/work/b", [{ name: "m", command: "c", args: [], env: [] }]);
    const news = await receivedOf(conn, "session/new");
    assert.deepEqual(news[0], { cwd: "/work/a", mcpServers: [] }, "session/new sends the folder and no MCP servers by default");
    assert.deepEqual(news[1].mcpServers, [{ name: "m", command: "c", args: [], env: [] }], "session/new sends the given MCP servers");

    await conn.loadSession("old-1", "/work/a");
    await conn.loadSession("old-2", "/work/b", [{ name: "m", command: "c", args: [], env: [] }]);
    const loads = await receivedOf(conn, "session/load");
    assert.deepEqual(loads[0], { sessionId: "old-1", cwd: "/work/a", mcpServers: [] }, "session/load sends the session, the folder and no MCP servers by default");
    assert.equal(loads[1].mcpServers.length, 1, "session/load sends the given MCP servers");

    await conn.listSessions();
    await conn.listSessions("/work/a", "c2");
    const lists = await receivedOf(conn, "session/list");
    assert.deepEqual(lists[0], {}, "session/list without a folder or cursor sends neither");
    assert.deepEqual(lists[1], { cwd: "/work/a", cursor: "c2" }, "session/list sends the folder and the cursor");

    await conn.prompt(s.sessionId, "hello there");
    await conn.prompt(s.sessionId, [{ type: "text", text: "a" }, { type: "resource_link", name: "f", uri: "file:///f" }]);
    const prompts = await receivedOf(conn, "session/prompt");
    assert.deepEqual(prompts[0], { sessionId: s.sessionId, prompt: [{ type: "text", text: "hello there" }] }, "a text prompt is sent as one text block");
    assert.deepEqual(prompts[1].prompt, [{ type: "text", text: "a" }, { type: "resource_link", name: "f", uri: "file:///f" }], "prompt blocks are sent as given");

    await conn.setMode(s.sessionId, "plan");
    assert.deepEqual(await receivedOf(conn, "session/set_mode"), [{ sessionId: s.sessionId, modeId: "plan" }], "set_mode sends the session and the mode");

    const r = await conn.setConfigOption(s.sessionId, "model", "fast");
    await conn.setConfigOption(s.sessionId, "thinking", true);
    const sets = await receivedOf(conn, "session/set_config_option");
    assert.deepEqual(sets[0], { sessionId: s.sessionId, configId: "model", value: "fast" }, "a select option is sent as its value");
    assert.deepEqual(sets[1], { sessionId: s.sessionId, configId: "thinking", type: "boolean", value: true }, "a boolean option is sent with type boolean");
    assert.equal(r.configOptions?.[0]?.currentValue, "fast", "the server's answer comes back");

    await conn.authenticate("login");
    assert.deepEqual(await receivedOf(conn, "authenticate"), [{ methodId: "login" }], "authenticate sends the method id");

    await conn.cancel(s.sessionId);
    const cancels = await receivedOf(conn, "session/cancel");
    assert.deepEqual(cancels, [{ sessionId: s.sessionId }], "cancel sends session/cancel for the session");
  });
});

test("the server's session updates, permission, fs and unknown requests reach the editor", async () => {
  const host = new RecordingHost();
  host.permissionAnswer = async () => ({ outcome: { outcome: "selected", optionId: "allow" } });
  host.fileText = "editor buffer";
  await withAgent({ host }, async (conn) => {
    await conn.initialize();
    const { sessionId } = await conn.newSession("/w");
    const perm = { sessionId, toolCall: { toolCallId: "t1", title: "Edit" }, options: [{ optionId: "allow", name: "Allow", kind: "allow_once" }] };
    await conn.prompt(
      sessionId,
      script(
        { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "one" } } },
        { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "two" } } },
        { request: "session/request_permission", params: perm },
        { request: "fs/read_text_file", params: { sessionId, path: "/w/a.txt", line: 2, limit: 3 } },
        { request: "fs/write_text_file", params: { sessionId, path: "/w/b.txt", content: "new" } },
        { request: "x/unknown", params: { a: 1 } },
      ),
    );
    assert.deepEqual(
      host.updates.map((u) => (u.update as { content: { text: string } }).content.text),
      ["one", "two"],
      "session updates reach the editor in arrival order",
    );
    assert.equal(host.permissionRequests[0]?.toolCall.toolCallId, "t1", "the permission request reaches the editor");
    assert.deepEqual(host.reads, [{ sessionId, path: "/w/a.txt", line: 2, limit: 3 }], "fs/read_text_file reaches the editor with line and limit");
    assert.deepEqual(host.writes, [{ sessionId, path: "/w/b.txt", content: "new" }], "fs/write_text_file reaches the editor");
    assert.deepEqual(host.unknown, [{ method: "x/unknown", params: { a: 1 } }], "a request we do not serve is reported to the host (logged)");
    const { results } = await agentLog(conn);
    assert.deepEqual(results[0], { outcome: { outcome: "selected", optionId: "allow" } }, "the editor's permission answer reaches the server");
    assert.deepEqual(results[1], { content: "editor buffer" }, "the editor's file text reaches the server");
    assert.deepEqual(results[2], {}, "a write is acknowledged");
    assert.equal(results[3].error.code, -32601, "a request we do not serve answers 'method not found'");
  });
});

test("terminal/* requests run real processes on the editor's machine", async () => {
  const cwd = tmp();
  await withAgent({ cwd }, async (conn) => {
    await conn.initialize();
    const { sessionId } = await conn.newSession(cwd);
    await conn.prompt(sessionId, script({ request: "terminal/create", params: { sessionId, command: "echo hi-from-terminal; pwd; exit 4" } }));
    const created = (await agentLog(conn)).results[0];
    assert.match(created.terminalId, /^term-/, "terminal/create answers a terminal id");
    const terminalId = created.terminalId;
    await conn.prompt(
      sessionId,
      script(
        { request: "terminal/wait_for_exit", params: { sessionId, terminalId } },
        { request: "terminal/output", params: { sessionId, terminalId } },
        { request: "terminal/kill", params: { sessionId, terminalId } },
        { request: "terminal/release", params: { sessionId, terminalId } },
        { request: "terminal/output", params: { sessionId, terminalId } },
      ),
    );
    const [, exit, output, killed, released, gone] = (await agentLog(conn)).results;
    assert.deepEqual(exit, { exitCode: 4, signal: null }, "terminal/wait_for_exit answers the exit code");
    assert.equal(output.output, `hi-from-terminal\n${cwd}\n`, "terminal/output answers the output; the command runs in the folder");
    assert.deepEqual(output.exitStatus, { exitCode: 4, signal: null }, "terminal/output carries the exit status once exited");
    assert.deepEqual(killed, {}, "terminal/kill is acknowledged");
    assert.deepEqual(released, {}, "terminal/release is acknowledged");
    assert.ok(gone.error, "a released terminal is gone");
  });
});

test("MCP requests without tunnelled servers are refused with 'server unavailable'", async () => {
  await withAgent({}, async (conn) => {
    await conn.initialize();
    const { sessionId } = await conn.newSession("/w");
    await conn.prompt(sessionId, script({ request: "mcp/connect", params: { serverId: "x" } }, { request: "mcp/message", params: { connectionId: "c" } }));
    const [a, b] = (await agentLog(conn)).results;
    assert.equal(a.error?.code, -32601, "without an MCP provider, mcp/connect is not served");
    assert.equal(b.error?.code, -32601, "without an MCP provider, mcp/message is not served");
  });
  const provider = new acp.McpOverAcpProvider();
  let router: LegacyMcpRouter | undefined;
  await withAgent({ mcpProvider: provider, legacyMcp: () => router }, async (conn) => {
    await conn.initialize();
    const { sessionId } = await conn.newSession("/w");
    await conn.prompt(
      sessionId,
      script(
        { request: "mcp/connect", params: { serverId: "x" } },
        { request: "mcp/message", params: { connectionId: "c", method: "tools/list" } },
        { request: "mcp/disconnect", params: { connectionId: "c" } },
      ),
    );
    const [connect, message, disconnect] = (await agentLog(conn)).results;
    assert.equal(connect.error?.code, acp.McpBindingErrorCode.serverUnavailable, "mcp/connect with no servers on this connection: server unavailable");
    assert.match(connect.error?.message ?? "", /no MCP servers/, "the refusal says there are no MCP servers");
    assert.equal(message.error?.code, acp.McpBindingErrorCode.serverUnavailable, "legacy mcp/message with no servers: server unavailable");
    assert.match(message.error?.message ?? "", /no MCP servers/);
    assert.deepEqual(disconnect, {}, "mcp/disconnect with no servers is acknowledged");
    // with a router, the legacy form is served by it
    router = new LegacyMcpRouter(() => undefined);
    await conn.prompt(sessionId, script({ request: "mcp/connect", params: { serverId: "nope" } }, { request: "mcp/disconnect", params: { connectionId: "c" } }));
    const r = (await agentLog(conn)).results;
    assert.match(r[3].error?.message ?? "", /unknown MCP server nope/, "mcp/connect goes to the legacy router");
    assert.deepEqual(r[4], {}, "mcp/disconnect goes to the legacy router");
  });
});

test("the process: started with the given command, args, folder and environment", async () => {
  const cwd = tmp();
  await withAgent({ cwd, env: { ...process.env, OV_PROBE: "probe-value" } }, async (conn) => {
    assert.ok(conn.pid! > 0, "the process has a pid");
    assert.equal(conn.isRunning, true, "the process runs after start");
    await conn.initialize();
    const { sessionId } = await conn.newSession(cwd);
    await conn.prompt(sessionId, script({ probe: "cwd" }, { probe: "env:OV_PROBE" }, { probe: "argv" }));
    const [pcwd, env, argv] = (await agentLog(conn)).results;
    assert.equal(pcwd, cwd, "the server runs in the folder");
    assert.equal(env, "probe-value", "the server gets the given environment");
    assert.deepEqual(argv, [], "the server gets the given arguments");
  });
  // without args, the server is started as `<command> acp`
  const dir = tmp();
  const argsFile = path.join(dir, "args");
  const wrapper = path.join(dir, "fake-openvaala");
  fs.writeFileSync(wrapper, `#!/bin/sh\necho "$@" > '${argsFile}'\nexec '${process.execPath}' '${SCRIPTED_AGENT}'\n`);
  fs.chmodSync(wrapper, 0o755);
  const conn = await AgentConnection.start({ command: wrapper, cwd: dir, host: new RecordingHost() });
  try {
    await conn.initialize();
    assert.equal(fs.readFileSync(argsFile, "utf8").trim(), "acp", "the default arguments are `acp`");
  } finally {
    await conn.stop(500);
  }
  await assert.rejects(AgentConnection.start({ command: path.join(dir, "missing-binary"), cwd: dir, host: new RecordingHost() }), /ENOENT/, "a binary that cannot start rejects start()");
});

test("exit: an unexpected exit is reported with its code and the end of stderr; stop() is expected", async () => {
  const host = new RecordingHost();
  const conn = await AgentConnection.start({ command: process.execPath, args: scriptedArgs({ stderr: "x".repeat(9000) + "TAIL" }), cwd: os.tmpdir(), host });
  await conn.initialize();
  const { sessionId } = await conn.newSession("/w");
  let created: ManagedTerminal | undefined;
  conn.terminals.listeners.add({ onCreate: (t) => (created = t) });
  await conn.prompt(sessionId, script({ request: "terminal/create", params: { sessionId, command: "sleep 30" } }));
  await assert.rejects(conn.prompt(sessionId, script({ stderr: "dying words" }, { exit: 7 })), "a prompt in flight fails when the server dies");
  const info = await conn.exited;
  assert.equal(info.code, 7, "the exit code is reported");
  assert.equal(info.expected, false, "a crash is not expected");
  assert.ok(info.stderrTail.endsWith("dying words"), "the exit report carries the end of stderr");
  assert.equal(info.stderrTail.length, 8192, "the stderr tail keeps the last 8 KiB");
  assert.ok(host.stderr.startsWith("xxx") && host.stderr.includes("TAIL"), "all of stderr goes to the host (server log)");
  assert.deepEqual(host.exits, [info], "the host is told once");
  assert.equal(conn.isRunning, false, "not running after exit");
  const st = await created!.exited;
  assert.ok(st.signal === "SIGKILL", "terminals of a dead server are killed");

  const host2 = new RecordingHost();
  const conn2 = await AgentConnection.start({ command: process.execPath, args: scriptedArgs(), cwd: os.tmpdir(), host: host2 });
  await conn2.initialize();
  const stopped = await conn2.stop();
  assert.equal(stopped.expected, true, "stop() reports an expected exit");
  assert.equal(stopped.code, 0, "a server that exits on end of input exits cleanly");
  assert.deepEqual(host2.exits.map((e) => e.expected), [true], "the host hears of an expected exit");
});

test("stop(): a server that ignores the end of its input is killed after the grace period", async () => {
  const conn = await AgentConnection.start({ command: process.execPath, args: scriptedArgs({ linger: true }), cwd: os.tmpdir(), host: new RecordingHost() });
  await conn.initialize();
  const t0 = Date.now();
  const r = await conn.stop(300);
  assert.equal(r.signal, "SIGKILL", "a lingering server is SIGKILLed");
  assert.equal(r.expected, true, "a kill by stop() is expected");
  assert.ok(Date.now() - t0 < 5000, "stop() does not hang");
  assert.ok(Date.now() - t0 >= 250, "stop() waits the grace period first");
});

test("killGroup kills the whole process group (what the server started dies with it)", async () => {
  const conn = await AgentConnection.start({ command: process.execPath, args: scriptedArgs({ linger: true }), cwd: os.tmpdir(), host: new RecordingHost() });
  await conn.initialize();
  const { sessionId } = await conn.newSession("/w");
  await conn.prompt(sessionId, script({ spawn: "sleep 30" }));
  const [grandchild] = (await agentLog(conn)).results as number[];
  conn.killGroup("SIGTERM");
  const info = await conn.exited;
  assert.equal(info.signal, "SIGTERM", "killGroup sends the given signal");
  assert.equal(info.expected, false, "a kill outside stop() is not expected");
  const alive = () => {
    try {
      process.kill(grandchild!, 0);
    } catch {
      return false;
    }
    try {
      return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${grandchild}/stat`, "utf8")); // a zombie is dead
    } catch {
      return true;
    }
  };
  await waitUntil(() => !alive(), 3000, "the server's own child to die with it").catch(() => assert.fail("a process the server started outlives it"));
  conn.killGroup(); // a second kill of a gone group is harmless
});
