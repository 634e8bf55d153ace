// A provider that echoes the key cut short (issue 40 item 10): a 20-character prefix of the key
// reaches neither the editor nor stderr, the log or the journal.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expectRpcError, scenario } from "./harness.mjs";

function readTree(dir) {
  let all = "";
  if (!fs.existsSync(dir)) return all;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) all += fs.readFileSync(path.join(e.parentPath ?? e.path, e.name), "utf8");
  return all;
}

scenario("a 20-character prefix of an echoed key is redacted like the key", async (ctx) => {
  const key = `sk-TESTSECRET-${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const prefix = key.slice(0, 20);
  const fake = await ctx.fakeModel([
    { text: `The key starts ${prefix}.` },
    { status: 401, errorMessage: `Incorrect API key provided: ${key}. Also ${prefix}` },
  ]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, maxRetries: 0 });
  const h = await ctx.agent({ env: { ...home.env, FAKE_MODEL_KEY: key, OPENVAALA_LOG: "debug", OPENVAALA_LOG_STDERR: "debug" }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "one");
  const err = await expectRpcError(h.prompt(sessionId, "two"), "a prompt the provider refuses");
  assert.match(err.message, /Incorrect API key provided: \[redacted\]\. Also \[redacted\]/, err.message);
  await h.close();
  for (const [where, text] of Object.entries({
    "the error sent to the editor": JSON.stringify(err),
    stderr: h.stderr,
    "the log file": readTree(path.join(home.dataDir, "logs")),
    "the session journal": readTree(path.join(home.dataDir, "sessions")),
  }))
    assert.ok(!text.includes(prefix), `${where} holds the key's first 20 characters`);
});
