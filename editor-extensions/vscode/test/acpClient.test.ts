// The ACP client wrapper + chat-state reducer against the REAL build/openvaala and the fake model.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { AgentConnection, type ClientHost } from "../src/core/acpClient.js";
import { initialChatState, reduce, agentText, type ChatState } from "../src/core/chatState.js";
import { completeSlash } from "../src/core/slash.js";
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { agentBinary, binaryMissing, startFakeModel, makeConfigHome, makeWorkspace, agentEnv, waitUntil, sleep } from "./util.js";

const skip = binaryMissing();

interface Rig {
  conn: AgentConnection;
  state: () => ChatState;
  permissions: acp.RequestPermissionRequest[];
  writes: acp.WriteTextFileRequest[];
  stderr: () => string;
  close(): Promise<void>;
}

async function rig(script: unknown[], files: Record<string, string> = {}, choose: (p: acp.RequestPermissionRequest) => string = (p) => p.options.find((o) => o.kind === "allow_once")!.optionId) {
  const fake = await startFakeModel(script);
  const home = await makeConfigHome(fake.url);
  const ws = await makeWorkspace(files);
  let state = initialChatState();
  let stderr = "";
  const permissions: acp.RequestPermissionRequest[] = [];
  const writes: acp.WriteTextFileRequest[] = [];
  let permCounter = 0;
  const host: ClientHost = {
    onSessionUpdate: (n) => {
      state = reduce(state, { type: "update", update: n.update });
    },
    requestPermission: async (p) => {
      permissions.push(p);
      const requestId = `p${++permCounter}`;
      state = reduce(state, { type: "permissionRequested", requestId, request: p });
      const optionId = choose(p);
      state = reduce(state, { type: "permissionResolved", requestId, outcome: optionId });
      return { outcome: { outcome: "selected", optionId } };
    },
    readTextFile: async (p) => ({ content: fs.readFileSync(p.path, "utf8") }),
    writeTextFile: async (p) => {
      writes.push(p);
      fs.writeFileSync(p.path, p.content);
      return {};
    },
    onStderr: (s) => {
      stderr += s;
    },
  };
  const conn = await AgentConnection.start({ command: agentBinary(), cwd: ws, env: await agentEnv(home.env), host });
  const r: Rig & { ws: string; fake: typeof fake } = {
    conn,
    ws,
    fake,
    state: () => state,
    permissions,
    writes,
    stderr: () => stderr,
    async close() {
      await conn.stop();
      await fake.close();
    },
  };
  (r as unknown as { setState: (s: ChatState) => void }).setState = (s) => (state = s);
  return r;
}

async function startSession(r: Awaited<ReturnType<typeof rig>>) {
  const init = await r.conn.initialize();
  assert.equal(init.protocolVersion, 1);
  const s = await r.conn.newSession(r.ws, []);
  (r as any).setState(reduce(r.state(), { type: "sessionStarted", sessionId: s.sessionId, modes: s.modes ?? null, configOptions: s.configOptions ?? null }));
  return s;
}

test("text turn streams into the chat-state reducer", { skip, timeout: 30000 }, async () => {
  const r = await rig([{ chunks: ["Hello ", "**world**", ", from the fake model."] }]);
  try {
    const s = await startSession(r);
    (r as any).setState(reduce(r.state(), { type: "userPrompt", text: "hi" }));
    const res = await r.conn.prompt(s.sessionId, "hi");
    assert.equal(res.stopReason, "end_turn", r.stderr());
    (r as any).setState(reduce(r.state(), { type: "turnEnded", stopReason: res.stopReason }));
    const st = r.state();
    assert.equal(agentText(st), "Hello **world**, from the fake model.");
    assert.equal(st.items[0]!.kind, "user");
    assert.equal(st.items.filter((i) => i.kind === "agent").length, 1, "chunks of one message make one item");
    assert.equal(st.busy, false);
    assert.ok(st.modes?.availableModes.length, "session/new returned modes");
  } finally {
    await r.close();
  }
});

test("permission prompt round trip: allow once, the edit goes through fs/write_text_file", { skip, timeout: 30000 }, async () => {
  const patch = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old line\n+new line\n*** End Patch";
  const r = await rig(
    [{ toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch } }] }, { text: "Edited." }],
    { "hello.txt": "old line\n" },
  );
  try {
    const s = await startSession(r);
    const res = await r.conn.prompt(s.sessionId, "edit it");
    assert.equal(res.stopReason, "end_turn", r.stderr());
    assert.equal(r.permissions.length, 1, "one permission request");
    const kinds = r.permissions[0]!.options.map((o) => o.kind).sort();
    assert.ok(kinds.includes("allow_once") && kinds.some((k) => k.startsWith("reject")), `options: ${kinds}`);
    assert.equal(fs.readFileSync(path.join(r.ws, "hello.txt"), "utf8"), "new line\n");
    assert.equal(r.writes.length, 1, "written through the client");
    const st = r.state();
    const perm = Object.values(st.permissions)[0]!;
    assert.equal(perm.outcome, r.permissions[0]!.options.find((o) => o.kind === "allow_once")!.optionId);
    const tools = Object.values(st.toolCalls);
    const edit = tools.find((t) => t.kind === "edit");
    assert.ok(edit, `an edit tool call in ${JSON.stringify(tools)}`);
    assert.equal(edit!.status, "completed");
    assert.ok(edit!.content.some((c) => c.type === "diff"), "the edit carries a diff");
    assert.match(agentText(st), /Edited\./);
  } finally {
    await r.close();
  }
});

test("permission rejected: the file is unchanged", { skip, timeout: 30000 }, async () => {
  const patch = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-old line\n+new line\n*** End Patch";
  const r = await rig(
    [{ toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: { patch } }] }, { text: "OK, not editing." }],
    { "hello.txt": "old line\n" },
    (p) => p.options.find((o) => o.kind === "reject_once")!.optionId,
  );
  try {
    const s = await startSession(r);
    const res = await r.conn.prompt(s.sessionId, "edit it");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(fs.readFileSync(path.join(r.ws, "hello.txt"), "utf8"), "old line\n");
    assert.equal(r.writes.length, 0);
  } finally {
    await r.close();
  }
});

test("slash commands from available_commands_update feed the completion", { skip, timeout: 30000 }, async (t) => {
  const r = await rig([]);
  try {
    await startSession(r);
    // the agent sends the list right after session/new when it has one
    await sleep(700);
    const cmds = r.state().commands;
    if (!cmds.length) {
      t.skip("the server sent no available_commands_update after session/new (not implemented in the server yet)");
      return;
    }
    const all = completeSlash(cmds, "");
    assert.equal(all.length, cmds.length);
    const first = cmds[0]!.name;
    const hits = completeSlash(cmds, first.slice(0, 2));
    assert.ok(hits.some((h) => h.name === first));
  } finally {
    await r.close();
  }
});

test("stop(): the process exits and reports expected", { skip, timeout: 15000 }, async () => {
  const r = await rig([]);
  await r.conn.initialize();
  const exit = await r.conn.stop();
  assert.equal(exit.expected, true);
  assert.equal(r.conn.isRunning, false);
  await r.fake.close();
});

test("an unexpected exit is reported with expected=false", { skip, timeout: 15000 }, async () => {
  const r = await rig([]);
  await r.conn.initialize();
  r.conn.killGroup("SIGKILL");
  const exit = await r.conn.exited;
  assert.equal(exit.expected, false);
  await waitUntil(() => !r.conn.isRunning, 2000);
  await r.fake.close();
});
