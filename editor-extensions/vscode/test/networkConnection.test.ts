// The extension reaching a running `openvaala acp --listen` by URL (a browser window, a codespace,
// a dev box through `ssh -L`) instead of starting a server: the REAL build/openvaala, the fake
// model, the SDK's Streamable HTTP client transport, and the FolderAgent's settings.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AgentConnection, serverHttpUrl, type AgentExit, type ClientHost } from "../src/core/acpClient.js";
import { FolderAgent } from "../src/vscode/folderAgent.js";
import { SERVER_TOKEN_SECRET } from "../src/vscode/serverSettings.js";
import { __test } from "./stubs/vscode.js";
import { MemorySecrets } from "./memorySecrets.js";
import { agentBinary, binaryMissing, startFakeModel, makeConfigHome, makeWorkspace, agentEnv, waitUntil } from "./util.js";

const skip = binaryMissing();

interface Server {
  url: string;
  child: ChildProcess;
  tokenFile: string;
  stop(): Promise<void>;
}

/** `openvaala acp --listen 127.0.0.1:0 --token-file F` in `ws`; resolves once it prints its address. */
async function startServer(env: Record<string, string>, ws: string, token: string): Promise<Server> {
  const tokenFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ovtok-")), "token");
  fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const child = spawn(agentBinary(), ["acp", "--listen", "127.0.0.1:0", "--token-file", tokenFile], { cwd: ws, env: await agentEnv(env), stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      stderr += d;
      const m = /listening on (ws:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before listening:\n${stderr}`)));
  });
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    url,
    child,
    tokenFile,
    async stop() {
      child.kill("SIGTERM");
      await gone;
    },
  };
}

/** A host that gathers the streamed agent text and the exit report. */
function recordingHost() {
  const seen = { text: "", exits: [] as AgentExit[], updates: 0 };
  const host: ClientHost = {
    onSessionUpdate: (n) => {
      seen.updates++;
      const u = n.update as { sessionUpdate: string; content?: { type: string; text?: string } };
      if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") seen.text += u.content.text ?? "";
    },
    requestPermission: async (p) => ({ outcome: { outcome: "selected", optionId: p.options[0]!.optionId } }),
    readTextFile: async (p) => ({ content: fs.readFileSync(p.path, "utf8") }),
    writeTextFile: async (p) => {
      fs.writeFileSync(p.path, p.content);
      return {};
    },
    onExit: (info) => seen.exits.push(info),
  };
  return { host, seen };
}

async function rig(script: unknown[], token = "net-token-1") {
  const fake = await startFakeModel(script);
  const home = await makeConfigHome(fake.url);
  const ws = await makeWorkspace({ "a.txt": "hello\n" });
  const server = await startServer(home.env, ws, token);
  return {
    fake,
    ws,
    server,
    async close() {
      await server.stop();
      await fake.close();
    },
  };
}

test("serverHttpUrl: ws(s) URLs are reached over http(s) at the same endpoint, a bare host gets /acp, anything else is a clear error", () => {
  assert.equal(serverHttpUrl("ws://127.0.0.1:8765/acp"), "http://127.0.0.1:8765/acp", "ws:// goes over http:// (Node's WebSocket cannot send the token header)");
  assert.equal(serverHttpUrl("wss://box.example/acp"), "https://box.example/acp", "wss:// goes over https://");
  assert.equal(serverHttpUrl(" http://127.0.0.1:9/ "), "http://127.0.0.1:9/acp", "a URL without a path is the server's /acp endpoint");
  assert.equal(serverHttpUrl("https://h/custom/acp"), "https://h/custom/acp", "a path given is kept");
  assert.throws(() => serverHttpUrl("127.0.0.1:8765"), /must start with http:\/\/, https:\/\/, ws:\/\/ or wss:\/\//, "a URL without a scheme names the schemes");
  assert.throws(() => serverHttpUrl("http://"), /openvaala\.server\.url: "http:\/\/" is not a URL/, "a URL that does not parse names the setting");
});

test("by URL with the token: a prompt streams, stopping leaves the server running, and a new connection loads the session", { skip, timeout: 60_000 }, async () => {
  const r = await rig([{ chunks: ["over ", "the network"] }]);
  try {
    const a = recordingHost();
    const conn = AgentConnection.connect({ url: r.server.url, token: "net-token-1", cwd: r.ws, host: a.host });
    assert.equal(conn.child, undefined, "no process is started for a URL");
    assert.equal(conn.url, serverHttpUrl(r.server.url), "the connection keeps the URL it reached");
    const init = await conn.initialize();
    assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
    assert.equal(conn.supportsLoad, true, "the server offers session/load over the network");
    const s = await conn.newSession(r.ws);
    const res = await conn.prompt(s.sessionId, "hi");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(a.seen.text, "over the network", "the turn's text streams to the editor over the network");
    assert.equal(conn.isRunning, true);
    const exit = await conn.stop();
    assert.equal(exit.expected, true, "a stop we asked for is expected");
    assert.match(exit.reason ?? "", /the connection to http:\/\/127\.0\.0\.1:\d+\/acp closed/, "the exit says which connection ended");
    assert.equal(conn.isRunning, false, "a closed connection is not running");
    assert.equal(r.server.child.exitCode, null, "the server runs on after the editor leaves");

    const b = recordingHost();
    const again = AgentConnection.connect({ url: r.server.url, token: "net-token-1", cwd: r.ws, host: b.host });
    await again.initialize();
    await again.loadSession(s.sessionId, r.ws);
    // Over Streamable HTTP the replay comes on the session's event stream and the answer on the
    // connection's (as the SDK's own server routes them): the two streams are not ordered.
    await waitUntil(() => /over the network/.test(b.seen.text), 10_000, "a new connection to replay the session's history (what a reconnecting editor does)");
    await again.stop();
  } finally {
    await r.close();
  }
});

test("a wrong token: initialize fails and the connection ends with its reason; nothing is started", { skip, timeout: 30_000 }, async () => {
  const r = await rig([]);
  try {
    const a = recordingHost();
    const conn = AgentConnection.connect({ url: r.server.url, token: "not-the-token", cwd: r.ws, host: a.host });
    await assert.rejects(conn.initialize(), "initialize with a wrong token is refused");
    const exit = await conn.exited;
    assert.equal(exit.expected, false, "a refused connection is not a stop we asked for");
    assert.match(exit.reason ?? "", /closed/);
    assert.equal(a.seen.exits.length, 1, "the host hears of the end once");
  } finally {
    await r.close();
  }
});

test("the server going away ends the connection as unexpected", { skip, timeout: 30_000 }, async () => {
  const r = await rig([]);
  try {
    const a = recordingHost();
    const conn = AgentConnection.connect({ url: r.server.url, token: "net-token-1", cwd: r.ws, host: a.host });
    await conn.initialize();
    await conn.newSession(r.ws);
    await r.server.stop();
    const exit = await conn.exited;
    assert.equal(exit.expected, false, "the server's end is not a stop we asked for (the folder agent reconnects)");
    assert.deepEqual(a.seen.exits, [exit]);
  } finally {
    await r.close();
  }
});

function folderAgent(dir: string, secrets = new MemorySecrets()) {
  const gs = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ovgs-")), "User", "globalStorage", "openvaala.openvaala");
  return new FolderAgent({ uri: vscode.Uri.file(dir), name: path.basename(dir), index: 0 } as vscode.WorkspaceFolder, {
    extensionPath: dir,
    globalStoragePath: gs,
    secrets: secrets as unknown as vscode.SecretStorage,
    log: vscode.window.createOutputChannel("net log"),
    mcpProvider: new acp.McpOverAcpProvider(),
    binary: "/nonexistent/openvaala-must-not-start",
  });
}

const logText = () => (__test.state.outputs.get("net log") ?? []).join("");

test("openvaala.server.url + tokenFile: the folder's chat talks to the running server and starts no process", { skip, timeout: 60_000 }, async () => {
  __test.reset();
  const r = await rig([{ chunks: ["from the server at a URL"] }]);
  const agent = folderAgent(r.ws);
  try {
    __test.setConfig("openvaala.server.url", r.server.url);
    __test.setConfig("openvaala.mcp.forwardVsCodeServers", false);
    __test.setConfig("openvaala.server.tokenFile", r.server.tokenFile);
    await agent.prompt("hi");
    await waitUntil(() => agent.state.items.some((i) => i.kind === "agent" && /from the server at a URL/.test((i as { text?: string }).text ?? "")), 10_000, "the agent's answer in the chat");
    assert.match(logText(), /connecting to ws:\/\/127\.0\.0\.1:\d+\/acp with a bearer token/, "the log says where the chat connects, not the token");
    assert.doesNotMatch(logText(), /net-token-1/, "the token never reaches the log");
    assert.doesNotMatch(logText(), /starting .*openvaala-must-not-start/, "no server process is started");
  } finally {
    agent.dispose();
    await r.close();
  }
});

test("the token from secret storage is used when no token file is set; an unreadable token file is an error naming the setting", { skip, timeout: 60_000 }, async () => {
  __test.reset();
  const r = await rig([{ chunks: ["secret ok"] }]);
  const secrets = new MemorySecrets();
  await secrets.store(SERVER_TOKEN_SECRET, "net-token-1");
  const agent = folderAgent(r.ws, secrets);
  const broken = folderAgent(r.ws);
  try {
    __test.setConfig("openvaala.server.url", r.server.url);
    __test.setConfig("openvaala.mcp.forwardVsCodeServers", false);
    const conn = await agent.ensureStarted();
    assert.equal(conn.url, serverHttpUrl(r.server.url), "the stored token opened the connection");
    __test.setConfig("openvaala.server.tokenFile", "/nonexistent/token");
    await assert.rejects(broken.ensureStarted(), /openvaala\.server\.tokenFile: cannot read \/nonexistent\/token/, "a token file that cannot be read is an error, never a connection without the token");
  } finally {
    agent.dispose();
    broken.dispose();
    await r.close();
  }
});
