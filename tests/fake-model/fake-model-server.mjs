#!/usr/bin/env node
// Fake LLM HTTP server speaking the real streaming wire formats of
//   - OpenAI Chat Completions  (POST <any prefix>/chat/completions, SSE `data:` chunks, `data: [DONE]`)
//   - Anthropic Messages       (POST <any prefix>/v1/messages, SSE `event:`/`data:` pairs)
// Every POST consumes the next scripted step (FIFO). Requests are recorded with their parsed body
// so tests can assert what the agent sent (tools offered, tool results, system prompt).
//
// A step is provider-neutral:
//   { text?, chunks?: string[], reasoning?, toolCalls?: [{id?, name, arguments}],
//     finish?: "stop"|"length"|"content_filter"|"tool_calls"|"refusal",
//     status?: number, retryAfter?: string, errorMessage?: string,
//     hang?: true, stallAfterChunks?: n, chunkDelayMs?: ms, usage?: {input, output, cached?} }
//   usage.cached: the part of `input` read from the provider's cache (OpenAI
//   prompt_tokens_details.cached_tokens; Anthropic cache_read_input_tokens, apart from input_tokens).
//
// Library:  const fake = await startFakeModel({ script: [step, ...] });
//           tls: { key, cert } (PEM) serves HTTPS instead, for the agent's TLS path; fake.url then says https.
//           fake.url, fake.port, fake.push(step | steps[]), fake.requests, await fake.awaitRequest(n), await fake.close()
//           models: the ids GET <any prefix>/models answers (default ["test-model"]); fake.models
//           may be reassigned (null: HTTP 500); modelsDelayMs delays that answer; fake.modelListRequests records
//           each GET /models ({path, headers}), apart from `requests` (which counts POSTs only).
// CLI:      node tests/fake-model/fake-model-server.mjs --port 0 --script steps.json
//           prints {"url": "..."} on one stdout line and serves until killed.
// No dependencies beyond node's standard library.

import http from "node:http";
import https from "node:https";
import fs from "node:fs";
import { fileURLToPath } from "node:url";

const NO_STEP_MESSAGE = "fake model: no scripted response left";

/** Split a string into about `n` pieces on code-point boundaries (never empty pieces). */
export function splitPieces(s, n = 3) {
  const cps = Array.from(s ?? "");
  if (cps.length === 0) return [];
  const count = Math.max(1, Math.min(n, cps.length));
  const size = Math.ceil(cps.length / count);
  const out = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(""));
  return out;
}

function finishFor(step) {
  if (step.finish) return step.finish;
  return step.toolCalls && step.toolCalls.length ? "tool_calls" : "stop";
}

const OPENAI_FINISH = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  content_filter: "content_filter",
  refusal: "content_filter", // Chat Completions has no "refusal" finish reason
};
const ANTHROPIC_STOP = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
  refusal: "refusal",
};

function textPieces(step) {
  if (Array.isArray(step.chunks)) return step.chunks.filter((c) => typeof c === "string");
  return splitPieces(step.text ?? "", 3);
}

function estimateTokens(obj) {
  try {
    return Math.max(1, Math.ceil(JSON.stringify(obj ?? "").length / 4));
  } catch {
    return 1;
  }
}

function errorBody(provider, status, message) {
  const type =
    status === 401 ? "authentication_error"
    : status === 403 ? "permission_error"
    : status === 404 ? "not_found_error"
    : status === 429 ? "rate_limit_error"
    : status === 529 ? "overloaded_error"
    : status >= 500 ? "api_error"
    : "invalid_request_error";
  if (provider === "anthropic") return { type: "error", error: { type, message } };
  const oaType = status === 401 ? "invalid_request_error" : status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
  const code = status === 401 ? "invalid_api_key" : status === 429 ? "rate_limit_exceeded" : null;
  return { error: { message, type: oaType, param: null, code } };
}

// ---------- event builders: each returns [{ kind: "text"|"end"|"other", data: string }] (raw SSE frames) ----------

function openaiEvents(step, body, ids) {
  const created = Math.floor(Date.now() / 1000);
  const id = `chatcmpl-fake-${ids.request}`;
  const model = body?.model ?? "fake-model";
  const chunk = (delta, finish_reason = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  const frame = (obj, kind = "other") => ({ kind, data: `data: ${JSON.stringify(obj)}\n\n` });
  const ev = [];
  ev.push(frame(chunk({ role: "assistant", content: "" })));
  for (const r of splitPieces(step.reasoning ?? "", 3)) ev.push(frame(chunk({ reasoning_content: r })));
  for (const t of textPieces(step)) ev.push(frame(chunk({ content: t }), "text"));
  (step.toolCalls ?? []).forEach((tc, index) => {
    const callId = tc.id ?? `call_fake_${ids.request}_${index}`;
    ev.push(frame(chunk({ tool_calls: [{ index, id: callId, type: "function", function: { name: tc.name, arguments: "" } }] })));
    const args = typeof tc.arguments === "string" ? tc.arguments : JSON.stringify(tc.arguments ?? {});
    for (const piece of splitPieces(args, 3)) ev.push(frame(chunk({ tool_calls: [{ index, function: { arguments: piece } }] })));
  });
  ev.push(frame(chunk({}, OPENAI_FINISH[finishFor(step)] ?? finishFor(step)), "end"));
  if (body?.stream_options?.include_usage) {
    const input = step.usage?.input ?? estimateTokens(body.messages);
    const output = step.usage?.output ?? estimateTokens([step.text, step.reasoning, step.toolCalls]);
    const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
    if (step.usage?.cached !== undefined) usage.prompt_tokens_details = { cached_tokens: step.usage.cached };
    ev.push(frame({ id, object: "chat.completion.chunk", created, model, system_fingerprint: "fp_fake", choices: [], usage }, "end"));
  }
  ev.push({ kind: "end", data: "data: [DONE]\n\n" });
  return ev;
}

function anthropicEvents(step, body, ids) {
  const frame = (type, obj, kind = "other") => ({ kind, data: `event: ${type}\ndata: ${JSON.stringify({ type, ...obj })}\n\n` });
  const model = body?.model ?? "fake-model";
  const input = step.usage?.input ?? estimateTokens([body?.system, body?.messages]);
  const output = step.usage?.output ?? estimateTokens([step.text, step.reasoning, step.toolCalls]);
  const cached = step.usage?.cached ?? 0;
  const ev = [];
  ev.push(frame("message_start", {
    message: { id: `msg_fake_${ids.request}`, type: "message", role: "assistant", model, content: [],
      stop_reason: null, stop_sequence: null,
      usage: { input_tokens: input - cached, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: cached } },
  }));
  ev.push(frame("ping", {}));
  let index = 0;
  if (step.reasoning) {
    ev.push(frame("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }));
    for (const r of splitPieces(step.reasoning, 3)) ev.push(frame("content_block_delta", { index, delta: { type: "thinking_delta", thinking: r } }));
    ev.push(frame("content_block_delta", { index, delta: { type: "signature_delta", signature: `fake-signature-${ids.request}` } }));
    ev.push(frame("content_block_stop", { index }));
    index++;
  }
  const texts = textPieces(step);
  if (texts.length) {
    ev.push(frame("content_block_start", { index, content_block: { type: "text", text: "" } }));
    texts.forEach((t, i) => {
      ev.push(frame("content_block_delta", { index, delta: { type: "text_delta", text: t } }, "text"));
      if (i === 0 && texts.length > 1) ev.push(frame("ping", {}));
    });
    ev.push(frame("content_block_stop", { index }));
    index++;
  }
  (step.toolCalls ?? []).forEach((tc, i) => {
    const callId = tc.id ?? `toolu_fake_${ids.request}_${i}`;
    ev.push(frame("content_block_start", { index, content_block: { type: "tool_use", id: callId, name: tc.name, input: {} } }));
    const args = typeof tc.arguments === "string" ? tc.arguments : JSON.stringify(tc.arguments ?? {});
    ev.push(frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const piece of splitPieces(args, 3)) ev.push(frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
    ev.push(frame("content_block_stop", { index }));
    index++;
  });
  ev.push(frame("message_delta", { delta: { stop_reason: ANTHROPIC_STOP[finishFor(step)] ?? finishFor(step), stop_sequence: null },
    usage: { output_tokens: output } }, "end"));
  ev.push(frame("message_stop", {}, "end"));
  return ev;
}

// ---------- non-streaming bodies (stream: false) ----------

function openaiJson(step, body, ids) {
  const input = step.usage?.input ?? estimateTokens(body?.messages);
  const output = step.usage?.output ?? estimateTokens([step.text, step.reasoning, step.toolCalls]);
  const message = { role: "assistant", content: textPieces(step).join("") || null };
  if (step.reasoning) message.reasoning_content = step.reasoning;
  if (step.toolCalls?.length) {
    message.tool_calls = step.toolCalls.map((tc, i) => ({
      id: tc.id ?? `call_fake_${ids.request}_${i}`, type: "function",
      function: { name: tc.name, arguments: typeof tc.arguments === "string" ? tc.arguments : JSON.stringify(tc.arguments ?? {}) },
    }));
  }
  return {
    id: `chatcmpl-fake-${ids.request}`, object: "chat.completion", created: Math.floor(Date.now() / 1000),
    model: body?.model ?? "fake-model",
    choices: [{ index: 0, message, logprobs: null, finish_reason: OPENAI_FINISH[finishFor(step)] ?? finishFor(step) }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  };
}

function anthropicJson(step, body, ids) {
  const content = [];
  if (step.reasoning) content.push({ type: "thinking", thinking: step.reasoning, signature: `fake-signature-${ids.request}` });
  const text = textPieces(step).join("");
  if (text) content.push({ type: "text", text });
  (step.toolCalls ?? []).forEach((tc, i) => content.push({
    type: "tool_use", id: tc.id ?? `toolu_fake_${ids.request}_${i}`, name: tc.name,
    input: typeof tc.arguments === "string" ? JSON.parse(tc.arguments) : (tc.arguments ?? {}),
  }));
  return {
    id: `msg_fake_${ids.request}`, type: "message", role: "assistant", model: body?.model ?? "fake-model", content,
    stop_reason: ANTHROPIC_STOP[finishFor(step)] ?? finishFor(step), stop_sequence: null,
    usage: { input_tokens: step.usage?.input ?? estimateTokens([body?.system, body?.messages]),
      output_tokens: step.usage?.output ?? estimateTokens([step.text, step.reasoning, step.toolCalls]) },
  };
}

// ---------- server ----------

export async function startFakeModel({ script = [], host = "127.0.0.1", port = 0, log = null, tls = null, models = ["test-model"], modelsDelayMs = 0 } = {}) {
  const modelListRequests = [];
  const queue = [...script];
  const requests = [];
  const waiters = []; // { n, resolve }
  const sockets = new Set();
  const timers = new Set();
  let closed = false;
  let requestCounter = 0;

  const sleep = (ms) => new Promise((resolve) => {
    const t = setTimeout(() => { timers.delete(t); resolve(); }, ms);
    timers.add(t);
  });

  function notifyWaiters() {
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (requests.length >= waiters[i].n) {
        waiters[i].resolve(requests[waiters[i].n - 1]);
        waiters.splice(i, 1);
      }
    }
  }

  function sendJson(res, status, obj, extraHeaders = {}) {
    const data = JSON.stringify(obj);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data), ...extraHeaders });
    res.end(data);
  }

  async function stream(res, req, events, step) {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-request-id": `req_fake_${requestCounter}`,
    });
    res.flushHeaders();
    let aborted = false;
    res.on("close", () => { aborted = true; });
    const delay = step.chunkDelayMs ?? 0;
    const stall = Number.isInteger(step.stallAfterChunks) ? step.stallAfterChunks : null;
    let textSent = 0;
    for (let i = 0; i < events.length; i++) {
      if (aborted || closed) return;
      const e = events[i];
      if (stall !== null && ((e.kind === "text" && textSent >= stall) || e.kind === "end")) {
        return; // stall forever: headers and `stall` text chunks sent, socket left open until close()
      }
      if (i > 0 && delay > 0) {
        await sleep(delay);
        if (aborted || closed) return;
      }
      res.write(e.data);
      if (e.kind === "text") textSent++;
    }
    res.end();
  }

  const handle = (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const rawBytes = Buffer.concat(chunks);
      const raw = rawBytes.toString("utf8");
      // Like the real APIs, a body that is not UTF-8 is not JSON (Node would quietly decode it).
      let notUtf8 = null;
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(rawBytes);
      } catch {
        notUtf8 = "the request body is not valid UTF-8";
      }
      const url = new URL(req.url, "http://fake");
      const path = url.pathname;
      if (req.method !== "POST") {
        if (req.method === "GET" && /\/models$/.test(path)) {
          modelListRequests.push({ path, headers: { ...req.headers } });
          if (!fake.models) return sendJson(res, 500, { error: { message: "fake model: no models list", type: "server_error" } });
          const data = fake.models.map((id) => ({ id, object: "model", created: 0, owned_by: "fake" }));
          const answer = () => { if (!closed) sendJson(res, 200, { object: "list", data }); };
          if (!modelsDelayMs) return answer();
          const t = setTimeout(() => { timers.delete(t); answer(); }, modelsDelayMs);
          timers.add(t);
          return;
        }
        return sendJson(res, 404, { error: { message: `fake model: no route for ${req.method} ${path}`, type: "not_found" } });
      }
      const provider = /\/chat\/completions$/.test(path) ? "openai" : /\/messages$/.test(path) ? "anthropic" : null;
      let body = null;
      let parseError = notUtf8;
      try {
        body = raw.length ? JSON.parse(raw) : null;
      } catch (e) {
        parseError = String(e.message);
      }
      const record = { path, method: req.method, headers: { ...req.headers }, body, raw, provider, parseError, step: null };
      requests.push(record);
      requestCounter = requests.length;
      const ids = { request: requestCounter };
      if (log) log(`fake model: request #${requestCounter} ${req.method} ${path}`);
      notifyWaiters();

      if (!provider) {
        return sendJson(res, 404, { error: { message: `fake model: no route for POST ${path}`, type: "not_found" } });
      }
      if (parseError) {
        return sendJson(res, 400, errorBody(provider, 400, `fake model: request body is not JSON: ${parseError}`));
      }
      const step = queue.shift();
      record.step = step ?? null;
      if (!step) {
        return sendJson(res, 500, errorBody(provider, 500, NO_STEP_MESSAGE));
      }
      if (step.hang) {
        return; // never respond; socket destroyed by close()
      }
      if (step.status && step.status !== 200) {
        const headers = {};
        if (step.status === 429 || step.retryAfter !== undefined) headers["retry-after"] = String(step.retryAfter ?? "0");
        return sendJson(res, step.status, errorBody(provider, step.status, step.errorMessage ?? `fake model: scripted HTTP ${step.status}`), headers);
      }
      if (body?.stream !== true) {
        return sendJson(res, 200, provider === "openai" ? openaiJson(step, body, ids) : anthropicJson(step, body, ids));
      }
      const events = provider === "openai" ? openaiEvents(step, body, ids) : anthropicEvents(step, body, ids);
      stream(res, req, events, step).catch(() => {});
    });
  };
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, handle) : http.createServer(handle);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.keepAliveTimeout = 5000;

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const actualPort = server.address().port;
  const url = `${tls ? "https" : "http"}://${host}:${actualPort}`;

  const fake = {
    url,
    port: actualPort,
    requests,
    models,
    modelListRequests,
    /** Remaining scripted steps (not yet consumed). */
    get pending() { return queue.length; },
    push(steps) {
      if (Array.isArray(steps)) queue.push(...steps);
      else queue.push(steps);
    },
    /** Resolves with the n-th (1-based) request record once it has arrived. */
    awaitRequest(n) {
      if (requests.length >= n) return Promise.resolve(requests[n - 1]);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

// ---------- CLI ----------

async function main(argv) {
  let port = 0;
  let host = "127.0.0.1";
  let script = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port") port = Number(argv[++i]);
    else if (a === "--host") host = argv[++i];
    else if (a === "--script") {
      const parsed = JSON.parse(fs.readFileSync(argv[++i], "utf8"));
      script = Array.isArray(parsed) ? parsed : parsed.steps ?? [];
    } else if (a === "--help" || a === "-h") {
      process.stderr.write("usage: fake-model-server.mjs [--port N] [--host H] [--script steps.json]\n");
      return;
    } else {
      process.stderr.write(`fake-model-server: unknown argument ${a}\n`);
      process.exit(2);
    }
  }
  const fake = await startFakeModel({ script, host, port, log: (m) => process.stderr.write(m + "\n") });
  process.stdout.write(JSON.stringify({ url: fake.url, port: fake.port }) + "\n");
  const stop = async () => { await fake.close(); process.exit(0); };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`fake-model-server: ${e.stack ?? e}\n`);
    process.exit(1);
  });
}
