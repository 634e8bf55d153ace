// A data folder the session log cannot be created in (issue 40 item 8): every turn is lost, and
// the editor is told so at the end of each turn, as for a full disk. The tests run as root, where
// chmod 0555 does not stop a write: the data folder is a regular file (ENOTDIR), or a tmpfs mounted
// read-only (EROFS) when mounting is allowed.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scenario } from "./harness.mjs";

const NOTICE = /could not be saved to the session history/;

async function promptTwice(ctx, dataDir, why) {
  const fake = await ctx.fakeModel([{ text: "first answer" }, { text: "second answer" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: { ...home.env, OPENVAALA_DATA_DIR: dataDir }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  const first = await h.prompt(sessionId, "first question");
  assert.equal(first.stopReason, "end_turn", "the turn itself still runs");
  const notices = h.noticesOf(sessionId);
  assert.equal(notices.filter((n) => NOTICE.test(n)).length, 1, `the first turn tells the editor: ${JSON.stringify(notices)}`);
  assert.match(h.textOf(sessionId), why, "the notice says why");
  await h.prompt(sessionId, "second question");
  assert.equal(h.noticesOf(sessionId).filter((n) => NOTICE.test(n)).length, 2, "so does every later turn");
  assert.match(h.answerOf(sessionId), /first answer.*second answer/s, "both answers reached the editor");
}

scenario("a data folder that is a file: each turn tells the editor it was not saved", async (ctx) => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "ov-datafile-"));
  ctx.defer(() => fs.rmSync(parent, { recursive: true, force: true }));
  const dataDir = path.join(parent, "data");
  fs.writeFileSync(dataDir, "not a folder\n");
  await promptTwice(ctx, dataDir, /Not a directory|File exists/);
});

scenario("a read-only data folder: each turn tells the editor it was not saved", async (ctx) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-rodata-"));
  ctx.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
  if (spawnSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir]).status !== 0)
    return ctx.t.skip("needs root to mount a read-only tmpfs");
  ctx.defer(() => spawnSync("umount", ["-l", dir]));
  await promptTwice(ctx, dir, /Read-only file system/);
});
