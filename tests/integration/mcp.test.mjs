// The MCP client (bridge/mcp) and the per-session manager (runtime/mcp) against real MCP
// servers from npm, driven by the mcp_probe test driver (tests/tools/mcp_probe.cpp):
// server-everything over stdio, Streamable HTTP and SSE; server-filesystem with roots; a
// crashing SDK server; process-group teardown on stdin EOF; MCP-over-ACP with the official ACP
// SDK client (McpOverAcpProvider) hosting an @modelcontextprotocol/sdk server, and the older
// mcp/connect form.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";
import { REPO_ROOT, makeWorkspace, sleep, startAgent, waitUntil, alive } from "./harness.mjs";
import { makeTunnelServer } from "../fixtures/mcp/tunnel-server.mjs";
import { probeBinary, runProbe } from "../fixtures/mcp/probe.mjs";

const EVERYTHING = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = path.join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const CRASHY = path.join(REPO_ROOT, "tests/fixtures/mcp/crashy-server.mjs");
const PROBE = probeBinary();
const SKIP = PROBE ? false : "mcp_probe not built (set MCP_PROBE_BIN; add_subdirectory(tools) in tests/CMakeLists.txt)";

function call(manager, tool) {
  const c = manager.calls.find((x) => x.tool === tool);
  assert.ok(c, `a result for ${tool}: ${JSON.stringify(manager.calls).slice(0, 500)}`);
  return c;
}

async function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** server-everything on loopback in `mode` (streamableHttp | sse). */
async function startEverything(mode) {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  await waitUntil(
    () => new Promise((r) => {
      const s = net.connect(port, "127.0.0.1", () => { s.destroy(); r(true); });
      s.on("error", () => r(false));
    }),
    { timeout: 10000, label: `server-everything ${mode} on ${port}` },
  );
  return { port, get log() { return log; }, stop: () => { try { process.kill(-child.pid, "SIGKILL"); } catch {} } };
}

const STANDARD_CALLS = [
  "--call", "echo", '{"message":"hi"}',
  "--call", "get-sum", '{"a":2,"b":40}',
  "--call", "get-tiny-image", "{}",
  "--call", "get-structured-content", '{"location":"Chicago"}',
  "--call", "get-resource-links", '{"count":2}',
  "--call", "get-roots-list", "{}",
  "--call", "trigger-long-running-operation", '{"duration":1,"steps":2}',
];

function assertStandardResults(m, root) {
  assert.equal(m.error, undefined, JSON.stringify(m.error));
  assert.ok(m.tools.includes("mcp__probe__echo"), m.tools.join(","));
  assert.ok(m.tools.length >= 10, `${m.tools.length} tools`);
  const echoSpec = m.specs.find((s) => s.name === "mcp__probe__echo");
  assert.deepEqual(echoSpec.parameters.required, ["message"]);
  assert.equal(call(m, "echo").result.text, "Echo: hi");
  assert.deepEqual(call(m, "echo").permissions, ["execute"]);
  assert.match(call(m, "get-sum").result.text, /42/);
  const img = call(m, "get-tiny-image").result;
  const imageBlock = img.content.find((c) => c.content?.type === "image");
  assert.equal(imageBlock.content.mimeType, "image/png");
  assert.ok(imageBlock.content.data.length > 100);
  assert.match(img.text, /\[image image\/png/);
  const sc = call(m, "get-structured-content").result;
  assert.equal(typeof sc.rawOutput.structuredContent.temperature, "number");
  const links = call(m, "get-resource-links").result;
  assert.equal(links.content.filter((c) => c.content?.type === "resource_link").length, 2);
  assert.match(call(m, "get-roots-list").result.text, new RegExp(`file://${root}`));
  const lro = call(m, "trigger-long-running-operation");
  assert.match(lro.result.text, /completed/);
  assert.ok(lro.updates.some((u) => /Progress 1\/2/.test(JSON.stringify(u))), JSON.stringify(lro.updates));
}

test("stdio: server-everything tools, content kinds, roots, progress; closed within 1 s", { skip: SKIP, timeout: 60000 }, async () => {
  const root = makeWorkspace({ "a.txt": "x" });
  const r = await runProbe(["--root", root, ...STANDARD_CALLS, "--", "stdio", process.execPath, EVERYTHING, "stdio"]);
  assert.equal(r.rc, 0, r.stderr);
  assertStandardResults(r.manager, root);
  assert.equal(r.manager.statusAfter[0].state, "ready");
  const closed = r.events.find((e) => e.ev === "closed");
  assert.ok(closed.ms < 1000, `close took ${closed.ms} ms`);
});

test("streamable HTTP: server-everything, session id, DELETE on close", { skip: SKIP, timeout: 60000 }, async () => {
  const srv = await startEverything("streamableHttp");
  try {
    const root = makeWorkspace({});
    const url = `http://127.0.0.1:${srv.port}/mcp`;
    const r = await runProbe(["--root", root, "--raw-call", "echo", '{"message":"raw"}', ...STANDARD_CALLS, "--", "http", url]);
    assert.equal(r.rc, 0, r.stderr);
    const connected = r.events.find((e) => e.ev === "connected");
    assert.equal(connected.protocolVersion, "2025-06-18");
    assert.equal(r.events.find((e) => e.ev === "raw-call").result.content[0].text, "Echo: raw");
    assertStandardResults(r.manager, root);
    await waitUntil(() => /session termination/i.test(srv.log), { timeout: 3000, label: "DELETE reached the server" });
  } finally {
    srv.stop();
  }
});

test("legacy HTTP+SSE: server-everything, relative endpoint, answers on the GET stream", { skip: SKIP, timeout: 60000 }, async () => {
  const srv = await startEverything("sse");
  try {
    const root = makeWorkspace({});
    const r = await runProbe(["--root", root, ...STANDARD_CALLS, "--", "sse", `http://127.0.0.1:${srv.port}/sse`]);
    assert.equal(r.rc, 0, r.stderr);
    assertStandardResults(r.manager, root);
  } finally {
    srv.stop();
  }
});

test("unreachable HTTP server: a required server fails the turn with its id and the reason", { skip: SKIP }, async () => {
  const port = await freePort();
  const r = await runProbe(["--id", "remote", "--required", "--timeout-ms", "3000", "--", "http", `http://127.0.0.1:${port}/mcp`]);
  assert.equal(r.rc, 1);
  assert.match(r.manager.error.message, /required MCP server 'remote'.*could not be reached: .*(refused|connect)/i);
  assert.deepEqual(r.manager.tools, []);
});

test("server-filesystem: roots replace the allowed dirs; tools filter", { skip: SKIP, timeout: 60000 }, async () => {
  const allowed = makeWorkspace({ "notes.txt": "hello from the allowed dir\n" });
  const other = makeWorkspace({ "secret.txt": "nope" });
  const r = await runProbe([
    "--id", "fs", "--root", allowed, "--tools", "read_text_file,list_directory", "--delay-ms", "500",
    "--call", "read_text_file", JSON.stringify({ path: path.join(allowed, "notes.txt") }),
    "--call", "list_directory", JSON.stringify({ path: allowed }),
    "--call", "read_text_file", JSON.stringify({ path: path.join(other, "secret.txt") }),
    "--", "stdio", process.execPath, FILESYSTEM, other,
  ]);
  assert.equal(r.rc, 0, r.stderr);
  const m = r.manager;
  assert.deepEqual([...m.tools].sort(), ["mcp__fs__list_directory", "mcp__fs__read_text_file"]);
  assert.equal(m.calls[0].result.text, "hello from the allowed dir\n");
  assert.match(m.calls[1].result.text, /notes\.txt/);
  // The client's roots replaced the command-line dir: the other dir is now outside.
  assert.equal(m.calls[2].result.isError, true, JSON.stringify(m.calls[2]));
  assert.match(m.calls[2].result.text, /denied|outside|not allowed/i);
});

test("tool timeout: notifications/cancelled, the model gets a timeout error, the server stays usable", { skip: SKIP, timeout: 30000 }, async () => {
  const r = await runProbe(["--id", "c", "--tool-timeout-ms", "300",
    "--call", "sleep", '{"ms":5000}', "--call", "pid", "{}",
    "--", "stdio", process.execPath, CRASHY]);
  const [slow, pid] = r.manager.calls;
  assert.equal(slow.result.isError, true);
  assert.match(slow.result.text, /timed out/);
  assert.ok(slow.ms < 2000, `${slow.ms} ms`);
  assert.match(pid.result.text, /^\d+$/);
});

test("cancel: a cancelled call ends promptly", { skip: SKIP, timeout: 30000 }, async () => {
  const r = await runProbe(["--cancel-after-ms", "200", "--call", "trigger-long-running-operation", '{"duration":10,"steps":10}',
    "--", "stdio", process.execPath, EVERYTHING, "stdio"]);
  const c = r.manager.calls[0];
  assert.equal(c.cancelled, true, JSON.stringify(c));
  assert.ok(c.ms < 1500, `${c.ms} ms`);
});

test("crash: reported, and the server is restarted on next use", { skip: SKIP, timeout: 30000 }, async () => {
  const r = await runProbe(["--id", "crashy", "--call", "pid", "{}", "--call", "crash", "{}", "--call", "pid", "{}",
    "--", "stdio", process.execPath, CRASHY]);
  const [before, crash, after] = r.manager.calls;
  assert.match(before.result.text, /^\d+$/);
  assert.equal(crash.result.isError, true);
  assert.match(crash.result.text, /crashy.*stopped.*exited with code 3.*restarted/s);
  assert.match(after.result.text, /^\d+$/);
  assert.notEqual(after.result.text, before.result.text, "a new process");
  assert.ok(r.events.some((e) => e.ev === "server-event" && /crashed/.test(e.message)));
  assert.ok(r.events.some((e) => e.ev === "server-event" && /restarted/.test(e.message)));
});

test("crash while a helper it started holds its stdout: the call fails at once and the helper is SIGKILLed", { skip: SKIP, timeout: 40000 }, async () => {
  // The helper shares the server's stdout and ignores SIGTERM, so the pipe never reaches EOF:
  // only the server's own exit can end the call, and only SIGKILL ends the helper.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-crash-helper-"));
  const pidFile = path.join(dir, "helper.pid");
  // The restarted server starts a helper too: the file keeps the first one's pid.
  const helper = `trap "" TERM; [ -e ${pidFile} ] || echo $$ > ${pidFile}; while :; do sleep 0.2; done`;
  const server = `sh -c '${helper}' & exec "${process.execPath}" "${CRASHY}"`;
  try {
    const r = await runProbe(["--id", "crashy", "--tool-timeout-ms", "6000", "--call", "crash", "{}",
      "--call", "alive", JSON.stringify({ file: pidFile, waitMs: 2000 }), "--", "stdio", "sh", "-c", server]);
    const [crash, helperState] = r.manager.calls;
    assert.equal(crash.result.isError, true, JSON.stringify(crash));
    assert.match(crash.result.text, /exited with code 3/, "the model is told the server exited");
    assert.ok(crash.ms < 3000, `the crashed call must fail when the server exits, not at its timeout: ${crash.ms} ms`);
    assert.equal(helperState.result.text, "gone", "a helper that ignores SIGTERM is SIGKILLed with the crashed server's group");
    // An answer written just before the server exits is still delivered, however long.
    fs.rmSync(pidFile);
    const last = await runProbe(["--id", "crashy", "--call", "answer-then-exit", JSON.stringify({ bytes: 16 << 20 }),
      "--", "stdio", "sh", "-c", server]);
    const [answer] = last.manager.calls;
    assert.equal(answer.result.isError, false, `the last answer before the exit is delivered: ${answer.result.text.slice(0, 300)}`);
    assert.equal(answer.result.text.length, 16 << 20, "the whole of it");
  } finally {
    try { process.kill(Number(fs.readFileSync(pidFile, "utf8")), "SIGKILL"); } catch {}
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("spawn failure: a clear error naming the command", { skip: SKIP }, async () => {
  const r = await runProbe(["--id", "nope", "--required", "--", "stdio", "/nonexistent/mcp-server"]);
  assert.equal(r.rc, 1);
  assert.match(r.manager.error.message, /'nope'.*(command not found|cannot start) \/?.*nonexistent\/mcp-server.*/);
});

// ------------------------------------------------------------------------------------------
// orphans: every process we started is gone soon after our stdin closes
// ------------------------------------------------------------------------------------------

function descendants(pid) {
  const byParent = new Map();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (after[0] === "Z") continue;
      const ppid = Number(after[1]);
      if (!byParent.has(ppid)) byParent.set(ppid, []);
      byParent.get(ppid).push(Number(d));
    } catch {}
  }
  const out = [];
  const walk = (p) => { for (const c of byParent.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}


test("orphans: stdin EOF mid-call kills the server and its grandchildren within 2 s", { skip: SKIP, timeout: 30000 }, async () => {
  const child = spawn(PROBE, ["--exit-on-stdin-eof", "--call", "spawn-child", "{}", "--call", "sleep", '{"ms":60000}',
    "--", "stdio", process.execPath, CRASHY], { stdio: ["pipe", "pipe", "pipe"], detached: true });
  child.stdout.resume();
  child.stderr.resume();
  let ours = [];
  try {
    // The server, and the `sleep 300` it started, both exist.
    ours = await waitUntil(() => {
      const d = descendants(child.pid);
      const hasSleep = d.some((p) => { try { return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").startsWith("sleep"); } catch { return false; } });
      return d.length >= 2 && hasSleep ? d : null;
    }, { timeout: 10000, label: "server and grandchild started" });
    await sleep(200);
    const exited = new Promise((r) => child.once("exit", (code) => r(code)));
    const t0 = Date.now();
    child.stdin.end();
    await exited;  // 3 from the EOF path, or 0 when the interrupted call finished the run first
    await waitUntil(() => ours.every((p) => !alive(p)), { timeout: 2000, label: `processes ${ours} gone` });
    assert.ok(Date.now() - t0 < 2000);
  } finally {
    for (const p of ours) try { process.kill(p, "SIGKILL"); } catch {}
    try { process.kill(-child.pid, "SIGKILL"); } catch {}
  }
});

// ------------------------------------------------------------------------------------------
// MCP-over-ACP: the probe is an ACP agent; the test process is the editor hosting the server
// ------------------------------------------------------------------------------------------

test("MCP-over-ACP: McpOverAcpProvider hosts an @modelcontextprotocol/sdk server", { skip: SKIP, timeout: 30000 }, async () => {
  const tunnel = await makeTunnelServer();
  const provider = new acpUnstable.McpOverAcpProvider();
  const ws = makeWorkspace({});
  let h;
  h = await startAgent({
    bin: PROBE, args: ["--acp"], cwd: ws,
    onRequest: (method, params, ctx) => {
      if (method === "mcp/message") return provider.handleRequest(ctx);
      throw new acpUnstable.RequestError(-32601, `Method not found: ${method}`);
    },
  });
  try {
    await h.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const reg = provider.registerServer(h.agent, { name: "editor-tools", handler: tunnel.handler });
    const report = await h.request("_probe/run", {
      cwd: ws,
      mcpServers: [reg.declaration],
      calls: [
        { tool: "mcp__editor-tools__echo", arguments: { message: "through the tunnel" } },
        { tool: "mcp__editor-tools__count", arguments: { to: 3 } },
      ],
    }, { timeout: 20000 });
    assert.equal(report.error, undefined, JSON.stringify(report.error));
    assert.deepEqual([...report.tools].sort(), ["mcp__editor-tools__count", "mcp__editor-tools__echo", "mcp__editor-tools__slow"]);
    assert.equal(report.calls[0].result.text, "tunnel echo: through the tunnel");
    const count = report.calls[1];
    assert.match(count.result.text, /counted to 3/);
    assert.deepEqual(count.result.rawOutput.structuredContent, { to: 3 });
    assert.ok(count.updates.some((u) => /Progress 2\/3: step 2/.test(JSON.stringify(u))), JSON.stringify(count.updates));
    // The wire: connectionless mcp/message with the stateless revision's _meta, no initialize.
    const sent = h.wire.fromAgent.filter((m) => m.method === "mcp/message");
    assert.ok(sent.length >= 3);
    for (const m of sent) {
      assert.equal(m.params.serverId, reg.serverId);
      assert.equal(typeof m.params.requestId, "string");
      assert.equal(m.params.params._meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
      assert.deepEqual(m.params.params._meta["io.modelcontextprotocol/clientCapabilities"], {});
      assert.equal(m.params.params._meta["io.modelcontextprotocol/clientInfo"].name, "openvaala");
    }
    assert.ok(!sent.some((m) => m.params.method === "initialize"));
    assert.ok(tunnel.calls.some((c) => c.method === "tools/call" && c.protocolVersion === "2026-07-28"));
    assert.deepEqual(h.schemaErrors, []);
  } finally {
    await h.close();
    await tunnel.close();
  }
});

test("MCP-over-ACP: timeout cancels the outer request ($/cancel_request)", { skip: SKIP, timeout: 30000 }, async () => {
  const tunnel = await makeTunnelServer();
  const provider = new acpUnstable.McpOverAcpProvider();
  const ws = makeWorkspace({});
  const h = await startAgent({
    bin: PROBE, args: ["--acp"], cwd: ws,
    onRequest: (method, params, ctx) => provider.handleRequest(ctx),
  });
  try {
    await h.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const reg = provider.registerServer(h.agent, { name: "t", handler: tunnel.handler });
    const report = await h.request("_probe/run", {
      cwd: ws, mcpServers: [reg.declaration], toolTimeoutMs: 300,
      calls: [{ tool: "mcp__t__slow", arguments: { ms: 10000 } }, { tool: "mcp__t__echo", arguments: { message: "after" } }],
    }, { timeout: 20000 });
    assert.match(report.calls[0].result.text, /timed out/);
    assert.equal(report.calls[1].result.text, "tunnel echo: after");
    assert.ok(h.wire.fromAgent.some((m) => m.method === "$/cancel_request"), "the outer call was cancelled");
    await waitUntil(() => tunnel.calls.some((c) => c.tool === "slow" && c.aborted), { timeout: 3000, label: "the handler saw the abort" });
  } finally {
    await h.close();
    await tunnel.close();
  }
});

test("MCP-over-ACP: falls back to mcp/connect when mcp/message {serverId} is unknown", { skip: SKIP, timeout: 30000 }, async () => {
  const tunnel = await makeTunnelServer();
  const ws = makeWorkspace({});
  const h = await startAgent({
    bin: PROBE, args: ["--acp"], cwd: ws,
    onRequest: async (method, params) => {
      if (method === "mcp/message" && !params.connectionId) throw new acpUnstable.RequestError(-32601, "Method not found: mcp/message");
      try {
        return await tunnel.legacy(method, params);
      } catch (e) {
        throw new acpUnstable.RequestError(e.code ?? -32603, e.message);
      }
    },
  });
  try {
    await h.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const report = await h.request("_probe/run", {
      cwd: ws, mcpServers: [{ type: "acp", name: "old", serverId: "old-1" }],
      calls: [{ tool: "mcp__old__echo", arguments: { message: "legacy" } }],
    }, { timeout: 20000 });
    assert.equal(report.error, undefined, JSON.stringify(report.error));
    assert.equal(report.calls[0].result.text, "tunnel echo: legacy");
    assert.deepEqual(
      tunnel.calls.filter((c) => c.legacy).map((c) => c.legacy + (c.method ? ":" + c.method : "")),
      ["connect", "message:initialize", "message:tools/list", "message:tools/call", "disconnect"],
    );
    assert.equal(tunnel.calls.find((c) => c.legacy === "connect").serverId, "old-1");
  } finally {
    await h.close();
    await tunnel.close();
  }
});

test("session/new mcpServers errors name the field (-32602)", { skip: SKIP, timeout: 20000 }, async () => {
  const ws = makeWorkspace({});
  const h = await startAgent({ bin: PROBE, args: ["--acp"], cwd: ws });
  try {
    await h.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await assert.rejects(
      h.request("_probe/run", { cwd: ws, mcpServers: [{ type: "http", name: "x", url: "ftp://nope", headers: [] }] }),
      (e) => e.code === -32602 && /mcpServers\[0\]\.url must be an http\(s\) URL/.test(e.message),
    );
  } finally {
    await h.close();
  }
});
