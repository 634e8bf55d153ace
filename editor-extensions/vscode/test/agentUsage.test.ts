// The chat against the REAL build/openvaala and the fake model: the server's usage, cost and
// errors as the extension shows them (what src/core/usage.ts and errorHints.ts expect of it).
import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as vscode from "vscode";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { __test } from "./stubs/vscode.js";
import { MemorySecrets } from "./memorySecrets.js";
import { FolderAgent } from "../src/vscode/folderAgent.js";
import { sessionUsage } from "../src/core/chatState.js";
import { sessionUsageText, turnUsageText } from "../src/core/usage.js";
import { agentBinary, agentEnv, binaryMissing, harness, makeWorkspace, startFakeModel, type FakeModel } from "./util.js";

const skip = binaryMissing();
const PRICED = "models:\n  - id: test-model\n    price: {input: 2.0, output: 8.0, cached_input: 0.5, currency: USD}\n";
let agent: FolderAgent | undefined;
let fake: FakeModel | undefined;

async function folderAgent(home: { env: Record<string, string> }): Promise<FolderAgent> {
  const ws = await makeWorkspace({});
  agent = new FolderAgent({ uri: vscode.Uri.file(ws), name: path.basename(ws), index: 0 } as vscode.WorkspaceFolder, {
    extensionPath: ws,
    globalStoragePath: path.join(ws, ".gs"),
    secrets: new MemorySecrets() as unknown as vscode.SecretStorage,
    log: vscode.window.createOutputChannel("test log"),
    mcpProvider: new acp.McpOverAcpProvider(),
    binary: agentBinary(),
    env: await agentEnv(home.env),
  });
  return agent;
}

beforeEach(() => __test.reset());
afterEach(async () => {
  await agent?.stop();
  agent?.dispose();
  await fake?.close();
  agent = fake = undefined;
});

test("the server's tokens and cost: each turn's under it, the session's in the header", { skip, timeout: 30_000 }, async () => {
  fake = await startFakeModel([
    { text: "one", usage: { input: 1000, output: 100, cached: 400 } },
    { text: "two", usage: { input: 2000, output: 200 } },
  ]);
  const home = await (await harness()).makeConfigHome({ provider: "openai", modelUrl: fake.url, providerYaml: PRICED });
  const a = await folderAgent(home);
  await a.prompt("first");
  await a.prompt("second");
  const turns = a.state.items.filter((i) => i.kind === "usage").map((i) => turnUsageText(i as never));
  // 600 uncached input at 2.0, 400 cached at 0.5, 100 output at 8.0 per million tokens; then 2000 at 2.0, 200 at 8.0
  assert.deepEqual(turns, ["1.1k tokens (1k in, 100 out) · $0.0022", "2.2k tokens (2k in, 200 out) · $0.0056"], "each turn: its tokens from the prompt's answer, its cost from usage_update");
  const header = sessionUsageText(sessionUsage(a.state))!;
  assert.match(header.text, /^2\.2k( \/ \S+)? tokens · \$0\.0078 this session$/, `the header: context and the session's cost (${header.text})`);
});

test("a model the server cannot reach: the chat's error is the server's, with where its address is set", { skip, timeout: 30_000 }, async () => {
  const home = await (await harness()).makeConfigHome({ provider: "openai", modelUrl: "http://127.0.0.1:9", maxRetries: 0 });
  const a = await folderAgent(home);
  await a.prompt("hello");
  const notice = a.state.items.find((i) => i.kind === "notice" && i.severity === "error") as { text: string } | undefined;
  assert.ok(notice, "the turn ends with an error");
  assert.match(notice.text, /cannot reach the model at http:\/\/127\.0\.0\.1:9\/v1/, "the server's error, as errorHints.ts expects it");
  assert.ok(notice.text.includes(`base_url in ${path.join(home.env.OPENVAALA_CONFIG_DIR!, "config.yaml")}`), `the config file the server reads: ${notice.text}`);
});
