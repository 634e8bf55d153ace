// What survives a Stop, and what clients that read rawOutput get.
import assert from "node:assert/strict";
import { scenario, withTimeout, toolCallsById } from "./harness.mjs";

for (const provider of ["openai", "anthropic"]) {
  scenario(`a stopped answer (${provider}) stays: the next request and session/load have the text the user saw, marked interrupted`, async (ctx) => {
    const chunks = Array.from({ length: 60 }, (_, i) => `part${i} `);
    const { fake, ws, home, h } = await ctx.setup({ provider, script: [{ chunks, chunkDelayMs: 150 }, { text: "Picking up again." }] });
    const { sessionId } = await h.newSession(ws);
    const prompt = h.prompt(sessionId, "tell me a long story");
    await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk" && /part2 /.test(h.textOf(sessionId)));
    await h.cancel(sessionId);
    assert.equal((await withTimeout(prompt, 3000, "cancelled prompt")).stopReason, "cancelled");
    const seen = h.textOf(sessionId);
    assert.ok(seen.includes("part0 part1 part2 "), seen);

    assert.equal((await h.prompt(sessionId, "go on")).stopReason, "end_turn");
    const sent = JSON.stringify(fake.requests[1].body.messages);
    assert.ok(sent.includes("part0 part1 part2 "), `the model is told what it already said before the Stop: ${sent.slice(0, 600)}`);
    assert.match(sent, /interrupted/, "the partial answer is marked as interrupted");

    await h.close();
    const h2 = await ctx.agent({ env: home.env, cwd: ws });
    await h2.initialize();
    await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    assert.ok(h2.textOf(sessionId).includes("part0 part1 part2 "), "session/load shows the interrupted answer under its prompt");
    h.assertSchemaClean();
    h2.assertSchemaClean();
  });
}

scenario("rawOutput carries what the model got: bash exit code and output, read_file's text", async (ctx) => {
  const { ws, h } = await ctx.setup({
    script: [
      { toolCalls: [{ id: "call_sh", name: "bash", arguments: { command: "echo raw-output-check; exit 3" } }] },
      { toolCalls: [{ id: "call_rd", name: "read_file", arguments: { path: "a.txt" } }] },
      { text: "done" },
    ],
    files: { "a.txt": "the file's text\n" },
    agentOpts: { clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } },
  });
  const { sessionId } = await h.newSession(ws);
  await h.setMode(sessionId, "full_auto");
  assert.equal((await h.prompt(sessionId, "check")).stopReason, "end_turn");
  const calls = toolCallsById(h, sessionId);
  const sh = calls.get("call_sh").filter((u) => u.rawOutput).at(-1)?.rawOutput;
  assert.equal(sh?.exitCode, 3, JSON.stringify(sh));
  assert.match(sh?.output ?? "", /raw-output-check/, "bash's rawOutput holds the output");
  const rd = calls.get("call_rd").filter((u) => u.rawOutput).at(-1)?.rawOutput;
  assert.match(rd?.output ?? "", /the file's text/, "read_file's rawOutput holds what the model read");
  h.assertSchemaClean();
});
