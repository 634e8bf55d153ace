// Many MCP servers, many sessions (issue 17): configured stdio servers start after the
// session/new reply (a required one is waited for before the first model call), one process is
// shared by the sessions of a connection that would start it identically and stops with the last
// of them (the editor's own servers stay per session), crashes, restarts and tools/list_changed
// reach every sharing session, and the way out signals every server at once: 100 servers that
// ignore SIGTERM are all gone after stdin EOF. Processes are counted for real (pgrep on a marker
// in their command line). Timings are in bench/mcp_scale_bench.mjs, not here.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { EVERYTHING } from "../fixtures/mcp/everything.mjs";
import {
  scenario, assertProcessesGone, describePids, expectRpcError, killMatching, pgrep, processesInGroups, sleep, toolNames, toolResultText, withTimeout,
  writeFiles,
} from "./harness.mjs";

const TINY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp/tiny-server.mjs");

/** A marker for this scenario's server processes and a state dir; leftovers are SIGKILLed. */
function marked(ctx) {
  const marker = `ovscale-${crypto.randomBytes(6).toString("hex")}`;
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${marker}-`)));
  ctx.defer(() => {
    killMatching(marker);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { marker, dir };
}

const tinyYaml = (id, run, extra = "") =>
  `id: ${id}\ntype: stdio\ncommand: ${process.execPath}\nargs: ["${TINY}", "${run.marker}", "${run.dir}"]\n${extra}`;

/** An initialized agent whose config dir also holds `files`. */
async function agentWith(ctx, files, script = []) {
  const fake = await ctx.fakeModel(script);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  writeFiles(home.configDir, files);
  const agent = await ctx.agent({ env: home.env, cwd: ws });
  await agent.initialize();
  return { fake, ws, agent };
}

/** Runs one turn in which the model calls `tool` of server `server`; returns what the tool answered. */
async function callTool(h, fake, sessionId, server, tool) {
  const id = `call_${crypto.randomBytes(4).toString("hex")}`;
  fake.push([{ toolCalls: [{ id, name: `mcp__${server}__${tool}`, arguments: {} }] }, { text: "done" }]);
  assert.equal((await h.prompt(sessionId, `call ${tool}`)).stopReason, "end_turn");
  return toolResultText(fake.requests.at(-1), id);
}

scenario("a configured stdio server is one process for every session that would start it identically; it stops with the last of them", async (ctx) => {
  const run = marked(ctx);
  const { fake, ws, agent } = await agentWith(ctx, { "mcp_servers/shared.yaml": tinyYaml("shared", run) });
  const a = (await agent.newSession(ws)).sessionId;
  const b = (await agent.newSession(ws)).sessionId;
  for (const s of [a, b]) await agent.setMode(s, "full_auto");

  const pidA = await callTool(agent, fake, a, "shared", "pid");
  const pidB = await callTool(agent, fake, b, "shared", "pid");
  assert.equal(pidB, pidA, "both sessions' calls reach the same server process");
  assert.deepEqual(pgrep(run.marker), [Number(pidA)], `two sessions, one server process: ${describePids(pgrep(run.marker))}`);

  // the editor's own server, even one started the same way, stays the session's own
  const editorServer = { name: "shared", command: process.execPath, args: [TINY, run.marker, run.dir], env: [] };
  const c = (await agent.newSession(ws, { mcpServers: [editorServer] })).sessionId;
  await agent.setMode(c, "full_auto");
  const pidC = await callTool(agent, fake, c, "shared", "pid");
  assert.notEqual(pidC, pidA, "a server from session/new mcpServers is not shared with the configured one");
  assert.equal(pgrep(run.marker).length, 2, `configured + editor's: ${describePids(pgrep(run.marker))}`);
  assert.deepEqual(await agent.request("session/close", { sessionId: c }), {});
  await assertProcessesGone(() => pgrep(run.marker).filter((p) => p === Number(pidC)), {
    promise: "closing the session stops the server its editor gave it",
  });

  // tools/list_changed from the shared server: the other session is offered the new tool too
  assert.equal(await callTool(agent, fake, a, "shared", "add-tool"), "added");
  await callTool(agent, fake, b, "shared", "pid");
  assert.ok(toolNames(fake.requests.at(-2)).includes("mcp__shared__extra"),
    `after tools/list_changed, session B is offered the new tool: ${toolNames(fake.requests.at(-2))}`);

  // a crash is told to every sharing session, and the next use starts one new process for all
  const crashId = "call_crash";
  fake.push([{ toolCalls: [{ id: crashId, name: "mcp__shared__crash", arguments: {} }] }, { text: "crashed" }]);
  await agent.prompt(a, "crash it");
  for (const s of [a, b])
    await agent.waitUntil(() => agent.noticesOf(s).some((n) => /MCP server `shared` crashed/.test(n)), {
      label: `session ${s === a ? "A" : "B"} is told that the shared server crashed`,
    });
  const restarted = await callTool(agent, fake, b, "shared", "pid");
  assert.notEqual(restarted, pidA, "a new process after the crash");
  assert.equal(await callTool(agent, fake, a, "shared", "pid"), restarted, "session A uses the restarted process too");
  assert.deepEqual(pgrep(run.marker), [Number(restarted)], `one process after the restart: ${describePids(pgrep(run.marker))}`);

  // closing one session keeps the server for the other; closing the last stops it
  assert.deepEqual(await agent.request("session/close", { sessionId: a }), {});
  await sleep(700);  // longer than the stdin grace of a close
  assert.deepEqual(pgrep(run.marker), [Number(restarted)], "the server outlives a session that closed while another uses it");
  assert.equal(await callTool(agent, fake, b, "shared", "pid"), restarted, "session B still reaches it");
  const e = await expectRpcError(agent.prompt(a, "hello?"), "prompt on the closed session");
  assert.match(e.message, new RegExp(a));
  assert.deepEqual(await agent.request("session/close", { sessionId: b }), {});
  await assertProcessesGone(() => pgrep(run.marker), {
    promise: "the shared server stops when the last session using it closes",
  });
  assert.equal(agent.exitInfo, null, "the agent keeps running");
  agent.assertSchemaClean();
}, { timeout: 90000 });

scenario("a configured server that answers initialize but fails tools/list is stopped at once, not left running beside the session", async (ctx) => {
  const run = marked(ctx);
  const { ws, agent } = await agentWith(ctx, {
    "mcp_servers/halfway.yaml": tinyYaml("halfway", run, "env:\n  TINY_LIST_FAILS: \"1\"\n"),
  });
  await agent.newSession(ws);
  await agent.waitUntil(() => fs.readdirSync(run.dir).some((f) => f.startsWith("initialized-")),
    { timeout: 10000, label: "the server to answer initialize" });
  await assertProcessesGone(() => pgrep(run.marker), {
    within: 3000,
    promise: "an MCP server whose start failed after initialize (tools/list) is stopped while its session lives on",
  });
  assert.equal(agent.exitInfo, null, "the agent keeps running");
}, { timeout: 60000 });

scenario("an optional server that failed to start is started again when the model asks for it by name", async (ctx) => {
  const run = marked(ctx);
  const flag = path.join(run.dir, "fail");
  fs.writeFileSync(flag, "");  // the first start fails
  const { fake, ws, agent } = await agentWith(ctx, {
    "mcp_servers/flaky.yaml": tinyYaml("flaky", run, `env:\n  TINY_FAIL_IF: "${flag}"\n`),
    // a server with resources, so that the model is offered list_mcp_resources
    "mcp_servers/everything.yaml": `id: everything\ntype: stdio\ncommand: ${process.execPath}\nargs: ["${EVERYTHING}", "stdio"]\n`,
  }, [{ text: "first turn" }]);
  const { sessionId } = await agent.newSession(ws);
  await agent.setMode(sessionId, "full_auto");
  assert.equal((await agent.prompt(sessionId, "hi", { timeout: 30000 })).stopReason, "end_turn");
  assert.ok(!toolNames(fake.requests[0]).includes("mcp__flaky__pid"), "set-up: the server failed to start, its tools are not offered");
  fs.rmSync(flag);
  fake.push([{ toolCalls: [{ id: "call_list", name: "list_mcp_resources", arguments: { server: "flaky" } }] }, { text: "listed" }]);
  assert.equal((await agent.prompt(sessionId, "what does flaky have?", { timeout: 30000 })).stopReason, "end_turn");
  const pid = await callTool(agent, fake, sessionId, "flaky", "pid");
  assert.match(pid, /^\d+$/,
    `promise: an optional server that failed to start is started again when it is asked for by name; then its pid tool answered: ${pid}`);
}, { timeout: 60000 });

scenario("session/new replies before a slow required server has started; the first prompt waits for it and offers its tools", async (ctx) => {
  const run = marked(ctx);
  const { fake, ws, agent } = await agentWith(ctx, {
    "mcp_servers/slow.yaml": tinyYaml("slow", run, "required: true\nenv:\n  TINY_INIT_DELAY_MS: \"1500\"\n"),
  }, [{ text: "ready" }]);
  const initialized = () => fs.readdirSync(run.dir).filter((f) => f.startsWith("initialized-"));
  const { sessionId } = await agent.newSession(ws);
  assert.deepEqual(initialized(), [], "session/new was answered before the server answered initialize");
  assert.equal((await agent.prompt(sessionId, "hi")).stopReason, "end_turn");
  assert.equal(initialized().length, 1, "the server was initialized before the model was called");
  assert.ok(toolNames(fake.requests[0]).includes("mcp__slow__pid"),
    `the first model request offers the required server's tools: ${toolNames(fake.requests[0])}`);
  // A session opened once the engine is in gets its MCP manager before the answer (a fresh
  // server's first session/new usually comes before): it too is answered before its server,
  // another process for another folder, is up.
  await agent.newSession(ctx.workspace({}));
  assert.equal(initialized().length, 1, "a later session/new was answered before its own server answered initialize");
  agent.assertSchemaClean();
}, { timeout: 60000 });

scenario("stdin EOF with 100 configured servers that ignore SIGTERM and are still starting: the agent exits by itself and none is left", async (ctx) => {
  const run = marked(ctx);
  // shell loops: cheap, never answer initialize, ignore SIGTERM (and so do their `sleep`s)
  const script = "trap '' TERM; while read -r l; do :; done; while :; do sleep 1; done";
  const servers = Array.from({ length: 100 }, (_, i) =>
    `  - id: s${i}\n    type: stdio\n    command: /bin/sh\n    args: ["-c", "${script}", "${run.marker}"]\n`).join("");
  const { ws, agent } = await agentWith(ctx, {
    "plugins/many/.openvaala-plugin/plugin.yaml": `name: many\nversion: 1.0.0\ndescription: many servers\nmcp_servers:\n${servers}`,
  });
  await agent.newSession(ws);
  await agent.newSession(ws);
  await agent.waitUntil(() => pgrep(run.marker).length >= 100, { timeout: 20000, label: "the 100 servers are running" });
  await sleep(500);
  const leaders = pgrep(run.marker);
  assert.equal(leaders.length, 100, `two sessions share the 100 configured servers: ${leaders.length} processes`);

  agent.child.stdin.end();
  await assertProcessesGone(() => processesInGroups(new Set(leaders)), {
    within: 2000,
    promise: "after stdin EOF every server's process group is gone, whatever their number (one shared grace period, then SIGKILL)",
  });
  const exit = await withTimeout(agent.exited, 1000, "the agent exits");
  assert.equal(exit.signal, null, `the agent exited by itself: ${JSON.stringify(exit)}`);
}, { timeout: 60000 });
