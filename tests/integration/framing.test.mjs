// JSON-RPC framing and error handling on raw stdin/stdout lines (no SDK).
import assert from "node:assert/strict";
import { scenario } from "./harness.mjs";

const INIT = { protocolVersion: 1, clientCapabilities: {} };

scenario("malformed input gets JSON-RPC errors and the server keeps working", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: home.env, cwd: ws });

  // parse error -> -32700 with id null
  let from = r.messages.length;
  await r.send("not json");
  const parse = await r.waitForMessage((m) => m.error && m.id === null, { from, label: "-32700" });
  assert.equal(parse.error.code, -32700);

  // invalid request (no method) -> -32600
  from = r.messages.length;
  await r.send('{"jsonrpc":"2.0","id":1}');
  const invalid = await r.waitForMessage((m) => m.error && (m.id === 1 || m.id === null), { from, label: "-32600" });
  assert.equal(invalid.error.code, -32600);

  // unknown method -> -32601 (before initialize the server may also refuse; the code must be method-not-found)
  const init = await r.request("initialize", INIT, 100);
  assert.equal(init.result?.protocolVersion, 1, JSON.stringify(init));
  from = r.messages.length;
  await r.send('{"jsonrpc":"2.0","id":2,"method":"foo/bar"}');
  const unknown = await r.waitForMessage((m) => m.id === 2, { from, label: "response to foo/bar" });
  assert.equal(unknown.error?.code, -32601);

  // session/new with a relative cwd -> -32602 mentioning cwd
  const rel = await r.request("session/new", { cwd: "relative/dir", mcpServers: [] }, 3);
  assert.equal(rel.error?.code, -32602, JSON.stringify(rel));
  assert.match(rel.error.message, /cwd/);

  // invalid UTF-8 inside a JSON string -> an error response, not a crash
  from = r.messages.length;
  await r.send(Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('","version":"1"}}}\n'),
  ]));
  const bad = await r.waitForMessage((m) => m.error && (m.id === 4 || m.id === null), { from, label: "error for invalid UTF-8" });
  assert.ok([-32700, -32600, -32602].includes(bad.error.code), `code ${bad.error.code}`);

  // a good initialize still gets a proper response
  const again = await r.request("initialize", INIT, 5);
  assert.equal(again.result?.protocolVersion, 1);
  assert.equal(r.exitInfo, null, "still running");
  r.assertSchemaClean();
});

scenario("string and numeric ids are echoed back exactly", async (ctx) => {
  const home = ctx.configHome({ provider: null });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: home.env, cwd: ws });
  for (const id of ["abc-1", 42, 0, "0", "ü-id", 9007199254740991]) {
    const res = await r.request("initialize", INIT, id);
    assert.ok(Object.is(res.id, id) || res.id === id, `id ${JSON.stringify(id)} echoed as ${JSON.stringify(res.id)}`);
    assert.equal(typeof res.id, typeof id);
    assert.equal(res.result?.protocolVersion, 1);
  }
  // the raw line carries the exact id token
  assert.ok(r.lines.some((l) => /"id":\s*9007199254740991[,}]/.test(l)));
  r.assertSchemaClean();
});

scenario("a 5 MiB prompt line is accepted", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "got it" }]);
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  const ws = ctx.workspace({});
  const r = await ctx.rawAgent({ env: home.env, cwd: ws });
  assert.equal((await r.request("initialize", INIT, 1)).result?.protocolVersion, 1);
  const created = await r.request("session/new", { cwd: ws, mcpServers: [] }, 2);
  const sessionId = created.result?.sessionId;
  assert.ok(sessionId, JSON.stringify(created));
  const big = "x".repeat(5 * 1024 * 1024);
  const res = await r.request("session/prompt", { sessionId, prompt: [{ type: "text", text: big }] }, 3, { timeout: 30000 });
  assert.equal(res.result?.stopReason, "end_turn", JSON.stringify(res).slice(0, 500));
  assert.equal(fake.requests.length, 1);
  assert.ok(JSON.stringify(fake.requests[0].body.messages).includes(big), "the whole prompt reached the model");
  r.assertSchemaClean();
}, { timeout: 60000 });
