import { test } from "node:test";
import assert from "node:assert/strict";
import { lineTap, redactTraffic } from "../src/core/traffic.js";

test("the traffic log masks MCP server env and header values, and nothing else", () => {
  const line = JSON.stringify({ method: "session/new", params: { cwd: "/w", mcpServers: [{ name: "gh", command: "x", env: [{ name: "TOKEN", value: "ghp_secret" }], headers: [{ name: "Authorization", value: "Bearer abc" }] }] } });
  const out = redactTraffic(line);
  assert.doesNotMatch(out, /ghp_secret|Bearer abc/, "secrets are masked");
  assert.match(out, /"name":"TOKEN","value":"\*\*\*"/, "names stay, values are masked");
  assert.match(out, /"cwd":"\/w"/, "the rest is unchanged");
  assert.equal(redactTraffic('{"env":{"API_KEY":"k1","B":"k2"},"x":"y"}'), '{"env":{"API_KEY":"***","B":"***"},"x":"y"}', "an env map is masked too");
});

test("the tap passes the bytes through unchanged and reports whole lines, even split across chunks", async () => {
  const seen: string[] = [];
  const tap = lineTap("recv", (d, l) => seen.push(`${d} ${l}`));
  const enc = new TextEncoder();
  const writer = tap.writable.getWriter();
  const reading = new Response(tap.readable).text();
  for (const part of ['{"a":', '1}\n{"b"', ':2}\n']) await writer.write(enc.encode(part));
  await writer.close();
  assert.equal(await reading, '{"a":1}\n{"b":2}\n', "the stream is untouched");
  assert.deepEqual(seen, ['recv {"a":1}', 'recv {"b":2}']);
});
