// Self-test of the fake model server: parse its own SSE output in both wire formats.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { startFakeModel, splitPieces } from "../fake-model/fake-model-server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.join(HERE, "..", "fake-model", "fake-model-server.mjs");

/** Parse an SSE body into [{event, data}] (data joined with \n), per the WHATWG rules we need. */
function parseSse(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event = null;
    const data = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    out.push({ event, data: data.join("\n") });
  }
  return out;
}

async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { res, text: await res.text() };
}

/** Reassemble an OpenAI chat.completion.chunk stream the way a client does. */
function assembleOpenAI(events) {
  const r = { role: null, content: "", contentPieces: [], reasoning: "", toolCalls: [], finish: null, usage: null, done: false };
  for (const e of events) {
    assert.equal(e.event, null, "OpenAI streams carry no event: field");
    if (e.data === "[DONE]") { r.done = true; continue; }
    assert.equal(r.done, false, "nothing after [DONE]");
    const c = JSON.parse(e.data);
    assert.equal(c.object, "chat.completion.chunk");
    if (c.usage) { r.usage = c.usage; assert.deepEqual(c.choices, []); continue; }
    const ch = c.choices[0];
    assert.equal(ch.index, 0);
    const d = ch.delta;
    if (d.role) r.role = d.role;
    if (d.content) { r.content += d.content; r.contentPieces.push(d.content); }
    if (d.reasoning_content) r.reasoning += d.reasoning_content;
    for (const tc of d.tool_calls ?? []) {
      if (!r.toolCalls[tc.index]) {
        assert.ok(tc.id, "first tool_calls delta carries the id");
        assert.equal(tc.type, "function");
        r.toolCalls[tc.index] = { id: tc.id, name: tc.function.name, arguments: tc.function.arguments ?? "" };
      } else {
        assert.equal(tc.id, undefined);
        r.toolCalls[tc.index].arguments += tc.function.arguments;
      }
    }
    if (ch.finish_reason) r.finish = ch.finish_reason;
  }
  return r;
}

/** Reassemble an Anthropic Messages stream. */
function assembleAnthropic(events) {
  const r = { blocks: [], stop: null, inputTokens: null, outputTokens: null, pings: 0, sequence: [] };
  for (const e of events) {
    const d = JSON.parse(e.data);
    assert.equal(d.type, e.event, "event: name equals data.type");
    r.sequence.push(e.event);
    switch (e.event) {
      case "message_start": r.inputTokens = d.message.usage.input_tokens; assert.equal(d.message.role, "assistant"); break;
      case "ping": r.pings++; break;
      case "content_block_start": {
        assert.equal(d.index, r.blocks.length);
        const b = { ...d.content_block, json: "" };
        r.blocks.push(b);
        break;
      }
      case "content_block_delta": {
        const b = r.blocks[d.index];
        if (d.delta.type === "text_delta") b.text += d.delta.text;
        else if (d.delta.type === "thinking_delta") b.thinking += d.delta.thinking;
        else if (d.delta.type === "signature_delta") b.signature = d.delta.signature;
        else if (d.delta.type === "input_json_delta") b.json += d.delta.partial_json;
        else assert.fail(`unknown delta ${d.delta.type}`);
        break;
      }
      case "content_block_stop": {
        const b = r.blocks[d.index];
        if (b.type === "tool_use") b.input = JSON.parse(b.json);
        break;
      }
      case "message_delta": r.stop = d.delta.stop_reason; r.outputTokens = d.usage.output_tokens; break;
      case "message_stop": break;
      default: assert.fail(`unknown event ${e.event}`);
    }
  }
  return r;
}

test("splitPieces splits on code points into about n pieces", () => {
  assert.deepEqual(splitPieces("abcdefg", 3), ["abc", "def", "g"]);
  assert.deepEqual(splitPieces("ab", 3), ["a", "b"]);
  assert.deepEqual(splitPieces("", 3), []);
  assert.equal(splitPieces("😀😀😀😀", 3).join(""), "😀😀😀😀");
  for (const p of splitPieces("😀😀😀😀", 3)) assert.ok(!/[\ud800-\udbff]$/.test(p));
});

test("openai: text, reasoning, tool calls, usage, [DONE]", async (t) => {
  const fake = await startFakeModel({
    script: [{
      text: "Hello there, world",
      reasoning: "thinking hard",
      toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "hello.txt" } }, { name: "bash", arguments: { command: "ls" } }],
      usage: { input: 11, output: 7 },
    }],
  });
  t.after(() => fake.close());
  const body = { model: "test-model", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] };
  const { res, text } = await post(`${fake.url}/v1/chat/completions`, body, { authorization: "Bearer sk-test" });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /^text\/event-stream/);
  const r = assembleOpenAI(parseSse(text));
  assert.equal(r.role, "assistant");
  assert.equal(r.content, "Hello there, world");
  assert.equal(r.contentPieces.length, 3);
  assert.equal(r.reasoning, "thinking hard");
  assert.equal(r.toolCalls.length, 2);
  assert.deepEqual({ ...r.toolCalls[0], arguments: JSON.parse(r.toolCalls[0].arguments) }, { id: "call_1", name: "read_file", arguments: { path: "hello.txt" } });
  assert.equal(r.toolCalls[1].name, "bash");
  assert.match(r.toolCalls[1].id, /^call_/);
  assert.deepEqual(JSON.parse(r.toolCalls[1].arguments), { command: "ls" });
  assert.equal(r.finish, "tool_calls");
  assert.deepEqual(r.usage, { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
  assert.equal(r.done, true);
  assert.equal(fake.requests.length, 1);
  assert.equal(fake.requests[0].path, "/v1/chat/completions");
  assert.equal(fake.requests[0].provider, "openai");
  assert.deepEqual(fake.requests[0].body, body);
  assert.equal(fake.requests[0].headers.authorization, "Bearer sk-test");
});

test("openai: explicit chunks, finish mapping, no usage chunk unless asked", async (t) => {
  const fake = await startFakeModel({ script: [{ chunks: ["a", "b", "c", "d"], finish: "length" }, { text: "x", finish: "refusal" }] });
  t.after(() => fake.close());
  let r = assembleOpenAI(parseSse((await post(`${fake.url}/anything/chat/completions`, { stream: true, messages: [] })).text));
  assert.deepEqual(r.contentPieces, ["a", "b", "c", "d"]);
  assert.equal(r.finish, "length");
  assert.equal(r.usage, null);
  r = assembleOpenAI(parseSse((await post(`${fake.url}/v1/chat/completions`, { stream: true, messages: [] })).text));
  assert.equal(r.finish, "content_filter");
});

test("anthropic: thinking, text, tool_use with partial json, message_delta, pings", async (t) => {
  const fake = await startFakeModel({
    script: [{
      text: "Let me look",
      reasoning: "I should read it",
      toolCalls: [{ id: "toolu_1", name: "read_file", arguments: { path: "hello.txt", limit: 10 } }],
      usage: { input: 20, output: 5 },
    }],
  });
  t.after(() => fake.close());
  const body = { model: "test-model", stream: true, max_tokens: 100, system: "sys", messages: [{ role: "user", content: "hi" }] };
  const { res, text } = await post(`${fake.url}/v1/messages`, body, { "x-api-key": "sk-test", "anthropic-version": "2023-06-01" });
  assert.equal(res.status, 200);
  const r = assembleAnthropic(parseSse(text));
  assert.equal(r.sequence[0], "message_start");
  assert.equal(r.sequence.at(-1), "message_stop");
  assert.equal(r.sequence.at(-2), "message_delta");
  assert.ok(r.pings >= 1);
  assert.equal(r.inputTokens, 20);
  assert.equal(r.outputTokens, 5);
  assert.equal(r.blocks.length, 3);
  assert.equal(r.blocks[0].type, "thinking");
  assert.equal(r.blocks[0].thinking, "I should read it");
  assert.ok(r.blocks[0].signature);
  assert.equal(r.blocks[1].type, "text");
  assert.equal(r.blocks[1].text, "Let me look");
  assert.equal(r.blocks[2].type, "tool_use");
  assert.equal(r.blocks[2].id, "toolu_1");
  assert.equal(r.blocks[2].name, "read_file");
  assert.deepEqual(r.blocks[2].input, { path: "hello.txt", limit: 10 });
  assert.equal(r.stop, "tool_use");
  assert.equal(fake.requests[0].provider, "anthropic");
  assert.equal(fake.requests[0].headers["x-api-key"], "sk-test");
  assert.equal(fake.requests[0].body.system, "sys");
});

test("anthropic: stop reason mapping", async (t) => {
  const fake = await startFakeModel({ script: [{ text: "a" }, { text: "b", finish: "length" }, { text: "c", finish: "refusal" }, { text: "d", finish: "content_filter" }] });
  t.after(() => fake.close());
  const stops = [];
  for (let i = 0; i < 4; i++) stops.push(assembleAnthropic(parseSse((await post(`${fake.url}/v1/messages`, { stream: true, messages: [] })).text)).stop);
  assert.deepEqual(stops, ["end_turn", "max_tokens", "refusal", "refusal"]);
});

test("non-streaming requests get a complete JSON body", async (t) => {
  const fake = await startFakeModel({ script: [{ text: "hi", toolCalls: [{ id: "c1", name: "bash", arguments: { command: "ls" } }] }, { text: "yo" }] });
  t.after(() => fake.close());
  const a = JSON.parse((await post(`${fake.url}/v1/chat/completions`, { messages: [] })).text);
  assert.equal(a.choices[0].message.content, "hi");
  assert.equal(a.choices[0].message.tool_calls[0].function.arguments, '{"command":"ls"}');
  assert.equal(a.choices[0].finish_reason, "tool_calls");
  const b = JSON.parse((await post(`${fake.url}/v1/messages`, { messages: [] })).text);
  assert.deepEqual(b.content, [{ type: "text", text: "yo" }]);
  assert.equal(b.stop_reason, "end_turn");
});

test("status steps and empty queue reply errors in the provider's format", async (t) => {
  const fake = await startFakeModel({ script: [{ status: 429 }, { status: 401 }, { status: 500 }] });
  t.after(() => fake.close());
  let { res, text } = await post(`${fake.url}/v1/chat/completions`, { stream: true });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "0");
  assert.ok(JSON.parse(text).error.message);
  ({ res, text } = await post(`${fake.url}/v1/messages`, { stream: true }));
  assert.equal(res.status, 401);
  assert.equal(JSON.parse(text).type, "error");
  assert.equal(JSON.parse(text).error.type, "authentication_error");
  ({ res, text } = await post(`${fake.url}/v1/chat/completions`, { stream: true }));
  assert.equal(res.status, 500);
  ({ res, text } = await post(`${fake.url}/v1/chat/completions`, { stream: true }));
  assert.equal(res.status, 500);
  assert.match(JSON.parse(text).error.message, /no scripted response left/);
  ({ res, text } = await post(`${fake.url}/v1/messages`, { stream: true }));
  assert.equal(res.status, 500);
  assert.match(JSON.parse(text).error.message, /no scripted response left/);
  assert.equal(fake.requests.length, 5);
});

test("push() appends steps; awaitRequest(n) resolves on the n-th request", async (t) => {
  const fake = await startFakeModel();
  t.after(() => fake.close());
  fake.push({ text: "one" });
  fake.push([{ text: "two" }, { text: "three" }]);
  assert.equal(fake.pending, 3);
  const second = fake.awaitRequest(2);
  let resolved = false;
  second.then(() => { resolved = true; });
  await post(`${fake.url}/v1/chat/completions`, { stream: true, n: 1 });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(resolved, false);
  await post(`${fake.url}/v1/chat/completions`, { stream: true, n: 2 });
  const rec = await second;
  assert.equal(rec.body.n, 2);
  assert.equal((await fake.awaitRequest(1)).body.n, 1);
  assert.equal(fake.pending, 1);
});

test("hang: no response at all; close() destroys the socket", async () => {
  const fake = await startFakeModel({ script: [{ hang: true }] });
  const p = fetch(`${fake.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true }) });
  let settled = false;
  p.then(() => { settled = true; }, () => { settled = true; });
  await fake.awaitRequest(1);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settled, false, "a hanging step must not respond");
  const t0 = Date.now();
  await fake.close();
  await assert.rejects(p);
  assert.ok(Date.now() - t0 < 1000);
});

test("stallAfterChunks: headers and n text chunks, then nothing", async () => {
  for (const provider of ["openai", "anthropic"]) {
    const fake = await startFakeModel({ script: [{ chunks: ["a", "b", "c", "d"], stallAfterChunks: 2 }] });
    const res = await fetch(`${fake.url}${provider === "openai" ? "/v1/chat/completions" : "/v1/messages"}`, {
      method: "POST", body: JSON.stringify({ stream: true }),
    });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    let text = "";
    const deadline = Date.now() + 400;
    const readSome = async () => {
      while (Date.now() < deadline) {
        const r = await Promise.race([reader.read(), new Promise((resolve) => setTimeout(() => resolve(null), deadline - Date.now()))]);
        if (r === null) return;
        if (r.done) assert.fail("stream must not end");
        text += Buffer.from(r.value).toString();
      }
    };
    await readSome();
    const events = parseSse(text);
    const texts = provider === "openai"
      ? events.map((e) => JSON.parse(e.data).choices[0].delta.content).filter(Boolean)
      : events.filter((e) => e.event === "content_block_delta").map((e) => JSON.parse(e.data).delta.text);
    assert.deepEqual(texts, ["a", "b"], provider);
    await fake.close();
    await assert.rejects(reader.read());
  }
});

test("chunkDelayMs spaces events out", async (t) => {
  const fake = await startFakeModel({ script: [{ chunks: ["a", "b", "c"], chunkDelayMs: 60 }] });
  t.after(() => fake.close());
  const t0 = Date.now();
  const { text } = await post(`${fake.url}/v1/chat/completions`, { stream: true });
  const elapsed = Date.now() - t0;
  assert.equal(assembleOpenAI(parseSse(text)).content, "abc");
  // role + 3 text + finish + [DONE] = 6 events -> 5 gaps
  assert.ok(elapsed >= 5 * 60 - 20, `elapsed ${elapsed}`);
});

test("client disconnect mid-stream stops the writer without crashing", async (t) => {
  const fake = await startFakeModel({ script: [{ chunks: Array.from({ length: 50 }, (_, i) => `c${i} `), chunkDelayMs: 20 }, { text: "after" }] });
  t.after(() => fake.close());
  const ac = new AbortController();
  const res = await fetch(`${fake.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true }), signal: ac.signal });
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  await new Promise((r) => setTimeout(r, 100));
  const { text } = await post(`${fake.url}/v1/chat/completions`, { stream: true });
  assert.equal(assembleOpenAI(parseSse(text)).content, "after");
});

test("CLI: --port 0 --script prints the url and serves the script", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-model-cli-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const scriptFile = path.join(dir, "steps.json");
  fs.writeFileSync(scriptFile, JSON.stringify([{ text: "from the cli" }]));
  const child = spawn(process.execPath, [SERVER, "--port", "0", "--script", scriptFile], { stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => child.kill("SIGKILL"));
  const rl = readline.createInterface({ input: child.stdout });
  const line = await new Promise((resolve, reject) => {
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`exited ${code}`)));
  });
  const { url } = JSON.parse(line);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const r = assembleAnthropic(parseSse((await post(`${url}/v1/messages`, { stream: true })).text));
  assert.equal(r.blocks[0].text, "from the cli");
  const exited = new Promise((resolve) => child.once("exit", (code, sig) => resolve({ code, sig })));
  child.kill("SIGTERM");
  const { code } = await exited;
  assert.equal(code, 0);
});
