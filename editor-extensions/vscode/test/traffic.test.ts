// The JSON-RPC traffic log (src/core/traffic.ts): what a bug report shows of each message, what it
// never shows (keys in env and headers), and that the bytes to and from the server are untouched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lineTap, messageTap, redactTraffic } from "../src/core/traffic.js";

test("the traffic log masks MCP server env and header values, and nothing else", () => {
  const line = JSON.stringify({ method: "session/new", params: { cwd: "/w", mcpServers: [{ name: "gh", command: "x", env: [{ name: "TOKEN", value: "ghp_secret" }], headers: [{ name: "Authorization", value: "Bearer abc" }] }] } });
  const out = redactTraffic(line);
  assert.doesNotMatch(out, /ghp_secret|Bearer abc/, "secrets are masked");
  assert.match(out, /"name":"TOKEN","value":"\*\*\*"/, "names stay, values are masked");
  assert.match(out, /"cwd":"\/w"/, "the rest is unchanged");
  assert.equal(redactTraffic('{"env":{"API_KEY":"k1","B":"k2"},"x":"y"}'), '{"env":{"API_KEY":"***","B":"***"},"x":"y"}', "an env map is masked too");
});

test("a message without secrets is logged as it was sent, config values and all", () => {
  for (const m of [
    { jsonrpc: "2.0", id: 4, method: "session/set_config_option", params: { sessionId: "s1", configId: "mode", value: "full_auto" } },
    { jsonrpc: "2.0", id: 5, result: { configOptions: [{ id: "executor", type: "select", currentValue: "local", options: [{ value: "local", name: "local" }] }] } },
    { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: 'the "env" of a shell: {"value": "x"}' } } } },
    { jsonrpc: "2.0", id: 6, error: { code: -32603, message: "boom", data: null } },
  ]) assert.equal(redactTraffic(JSON.stringify(m)), JSON.stringify(m), `${JSON.stringify(m).slice(0, 60)} is unchanged`);
});

test("env and headers are masked wherever they are: terminals, nested servers, pretty JSON, escaped quotes", () => {
  const terminal = { jsonrpc: "2.0", id: 9, method: "terminal/create", params: { sessionId: "s", command: "make", env: [{ name: "PASS", value: 'p"w\\d' }, { name: "EMPTY" }, "odd"] } };
  assert.deepEqual(JSON.parse(redactTraffic(JSON.stringify(terminal, null, 2))), { ...terminal, params: { ...terminal.params, env: [{ name: "PASS", value: "***" }, { name: "EMPTY" }, "odd"] } }, "a terminal's env values are masked; entries without a value are kept as they are");
  const nested = { result: { deep: [{ server: { headers: { Authorization: "Bearer x", "X-Id": 7 } } }], env: "not a list" } };
  assert.deepEqual(JSON.parse(redactTraffic(JSON.stringify(nested))), { result: { deep: [{ server: { headers: { Authorization: "***", "X-Id": "***" } } }], env: "not a list" } }, "a header map deep inside is masked; an env that is neither list nor map is left");
});

test("a line that is not JSON still has its values masked", () => {
  assert.equal(redactTraffic('partial {"name":"T","value" : "s\\"ecret", "env": {"K": "v1", "L":"v2"}'), 'partial {"name":"T","value" : "***", "env": {"K": "***", "L":"***"}');
  assert.equal(redactTraffic("plain text"), "plain text");
  assert.equal(
    redactTraffic('cut {"value":"a","value"  :  "b", "env":{"K":"c"}, "env"  :  {"L": "d"}'),
    'cut {"value":"***","value"  :  "***", "env":{"K":"***"}, "env"  :  {"L": "***"}',
    "with or without spaces around the colon",
  );
});

async function tap(parts: (string | Uint8Array)[], direction: "send" | "recv" = "recv") {
  const seen: string[] = [];
  const t = lineTap(direction, (d, l) => seen.push(`${d} ${l}`));
  const enc = new TextEncoder();
  const writer = t.writable.getWriter();
  const reading = new Response(t.readable).text();
  for (const part of parts) await writer.write(typeof part === "string" ? enc.encode(part) : part);
  await writer.close();
  return { passed: await reading, seen };
}

test("the tap passes the bytes through unchanged and reports whole lines, even split across chunks", async () => {
  const { passed, seen } = await tap(['{"a":', '1}\n{"b"', ":2}\n"]);
  assert.equal(passed, '{"a":1}\n{"b":2}\n', "the stream is untouched");
  assert.deepEqual(seen, ['recv {"a":1}', 'recv {"b":2}']);
});

test("the tap: blank lines are not reported, a last line without newline is, each masked, with its direction", async () => {
  const secret = '{"env":{"K":"v"}}';
  const { passed, seen } = await tap(["\n  \n", `${secret}\n`, "\r\n", secret], "send");
  assert.equal(passed, `\n  \n${secret}\n\r\n${secret}`, "the bytes are not masked, only the log is");
  assert.deepEqual(seen, ['send {"env":{"K":"***"}}', 'send {"env":{"K":"***"}}'], "two messages, both masked, the last one when the stream ends");
  assert.deepEqual((await tap(["  "])).seen, [], "a stream that ends in blanks reports nothing");
});

test("the tap: a character split between two chunks is logged whole", async () => {
  const bytes = new TextEncoder().encode('{"t":"é✓"}\n');
  const { seen } = await tap([bytes.slice(0, 7), bytes.slice(7, 9), bytes.slice(9)]);
  assert.deepEqual(seen, ['recv {"t":"é✓"}']);
});

test("messageTap (the network transports carry messages, not lines): each message passes on untouched and is logged redacted", async () => {
  const logged: string[] = [];
  const tap = messageTap<object>("recv", (d, l) => logged.push(`${d} ${l}`));
  const sent = { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [{ name: "gh", command: "x", env: [{ name: "T", value: "ghp_secret" }] }] } };
  const writer = tap.writable.getWriter();
  void writer.write(sent);
  void writer.close();
  const out: object[] = [];
  for await (const m of tap.readable as unknown as AsyncIterable<object>) out.push(m);
  assert.deepEqual(out, [sent], "the message reaches the connection as it was, secret and all");
  assert.equal(logged.length, 1, "one log line per message");
  assert.match(logged[0]!, /^recv \{"jsonrpc":"2.0","id":1,"method":"session\/new"/, "the direction and the message");
  assert.doesNotMatch(logged[0]!, /ghp_secret/, "the log masks the env values");
});
