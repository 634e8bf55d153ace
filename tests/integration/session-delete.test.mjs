// session/delete during a running turn (issue 40, nit): the turn ending after the delete must
// not write the session's sidecar back (it left an orphan <id>.meta.json).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { scenario, waitUntil } from "./harness.mjs";

scenario("session/delete during a turn leaves no file of the session behind", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "first answer" }, { chunks: ["streaming ", "forever"], stallAfterChunks: 1 }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "first question");
  const dir = path.join(home.dataDir, "sessions");
  const filesOf = () => fs.readdirSync(dir).filter((f) => f.startsWith(sessionId));
  assert.ok(filesOf().some((f) => f.endsWith(".meta.json")), "the session has its sidecar before the delete");

  const turn = h.prompt(sessionId, "second question").catch((e) => e);
  await fake.awaitRequest(2);
  await waitUntil(() => /streaming/.test(h.textOf(sessionId)), { label: "the second answer streams" });
  await h.request("session/delete", { sessionId });
  await turn;
  // The turn's end runs after the delete's answer.
  await waitUntil(() => filesOf().length === 0, { label: "no log, no sidecar left" })
    .catch(() => assert.deepEqual(filesOf(), [], "no log, no sidecar left"));
  const listed = await h.request("session/list", {});
  assert.ok(!listed.sessions.some((s) => s.sessionId === sessionId), "nor listed");
});
