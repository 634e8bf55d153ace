// Integration-test harness: spawns `openvaala acp`, drives it with the official ACP SDK 2.x client,
// validates every line the agent writes against the ACP JSON schema, and provides real client-side
// handlers (permission, fs, terminal) plus a raw line mode for framing tests.
//
//   const fake = await startFakeModel({ script: [...] });
//   const ws = makeWorkspace({ "hello.txt": "old line\n" });
//   const home = makeConfigHome({ provider: "openai", modelUrl: fake.url });
//   const h = await startAgent({ env: home.env, cwd: ws });
//   await h.initialize();
//   const { sessionId } = await h.newSession(ws);
//   const res = await h.prompt(sessionId, "hi");
//   assert.deepEqual(h.schemaErrors, []);
//   await h.close();

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { Readable, Writable, PassThrough } from "node:stream";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import * as acpUnstable from "@agentclientprotocol/sdk/unstable";

export { startFakeModel } from "../fake-model/fake-model-server.mjs";

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, "..", "..");
export const SCHEMA_DIR = path.join(REPO_ROOT, "tests", "fixtures", "acp-schema");

export function agentBinary() {
  const bin = process.env.OPENVAALA_BIN || "build/openvaala";
  return path.isAbsolute(bin) ? bin : path.resolve(REPO_ROOT, bin);
}

export function agentBinaryExists() {
  try {
    fs.accessSync(agentBinary(), fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------
// small utilities
// ------------------------------------------------------------------------------------------

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * How much longer than a test's figure to wait before calling something hung: test files run two
 * at a time beside builds, and a loaded machine must not fail a test (the 100-server scenario
 * once did at load 16). Every bound below is a failure bound, never a speed claim: timings are
 * bench/'s. OPENVAALA_TEST_SLACK=1 gives the figures as written.
 */
export const SLACK = Number(process.env.OPENVAALA_TEST_SLACK || 4);

/** Rejects with `label` if `promise` has not settled within `ms`. */
export function withTimeout(promise, ms, label = "operation") {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timeout after ${ms * SLACK} ms: ${label}`)), ms * SLACK);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `fn` until it returns a truthy value; resolves with that value. */
export async function waitUntil(fn, { timeout = 5000, interval = 20, label = "condition" } = {}) {
  const deadline = Date.now() + timeout * SLACK;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timeout after ${timeout * SLACK} ms waiting for ${label}`);
    await sleep(interval);
  }
}

/** Calls `fn()` expecting a JSON-RPC error; returns the error ({code, message, data}). */
export async function expectRpcError(promise, label = "request") {
  try {
    const v = await promise;
    assert.fail(`${label}: expected a JSON-RPC error, got result ${JSON.stringify(v)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    if (typeof e?.code !== "number") throw new Error(`${label}: expected a JSON-RPC error, got ${e?.stack ?? e}`);
    return e;
  }
}

const tempDirs = new Set();
function mkTemp(prefix) {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  tempDirs.add(d);
  return d;
}
export function removeTempDirs() {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}
process.on("exit", () => {
  if (!process.env.OPENVAALA_KEEP_TMP) removeTempDirs();
});

/** A temp directory holding `files` ({ "relative/path": "content" }). Returns its absolute, real path. */
export function makeWorkspace(files = {}) {
  const dir = mkTemp("ov-ws-");
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir, files) {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
}

/** Copies a directory tree (used by the demo for examples/workspace). */
export function copyTree(src, dst) {
  fs.cpSync(src, dst, { recursive: true });
  return dst;
}

/**
 * Temp config/data/cache dirs and the env that points the agent at them.
 * provider: "openai" | "anthropic" | null (null = no config.yaml at all).
 * Returns { root, configDir, dataDir, cacheDir, homeDir, env, configPath }.
 */
export function makeConfigHome({
  provider = "openai",
  modelUrl,
  extraYaml = "",
  providerYaml = "",
  maxRetries = 2,
  // A fake model answers at once on an idle machine; on a loaded one its first byte may take a
  // few seconds, and a 2 s idle timeout then retried the request and shifted the script.
  idleTimeoutSeconds = 2 * SLACK,
  model = "fake/test-model",
  // How long a turn's first model request waits for optional MCP servers still starting: long
  // here, so that a scenario's servers are offered from its first request however loaded the
  // machine is; null: the server's default (500 ms).
  mcpStartupWaitMs = 60000,
} = {}) {
  const root = mkTemp("ov-home-");
  const configDir = path.join(root, "config");
  const dataDir = path.join(root, "data");
  const cacheDir = path.join(root, "cache");
  const homeDir = path.join(root, "home");
  for (const d of [configDir, dataDir, cacheDir, homeDir]) fs.mkdirSync(d, { recursive: true });
  const configPath = path.join(configDir, "config.yaml");
  if (provider) {
    if (!modelUrl) throw new Error("makeConfigHome: modelUrl is required when provider is set");
    const baseUrl = provider === "openai" ? `${modelUrl}/v1` : modelUrl;
    let yaml =
      `model: ${model}\n` +
      (mcpStartupWaitMs == null ? "" : `mcp_startup_wait_ms: ${mcpStartupWaitMs}\n`) +
      `providers:\n` +
      `  fake:\n` +
      `    api_type: ${provider}\n` +
      `    base_url: ${baseUrl}\n` +
      `    api_key_env: FAKE_MODEL_KEY\n` +
      `    max_retries: ${maxRetries}\n` +
      `    idle_timeout_seconds: ${idleTimeoutSeconds}\n`;
    if (providerYaml) yaml += providerYaml.replace(/^/gm, "    ").replace(/\s+$/, "") + "\n";
    if (extraYaml) yaml += extraYaml.endsWith("\n") ? extraYaml : extraYaml + "\n";
    fs.writeFileSync(configPath, yaml);
  }
  const env = {
    OPENVAALA_CONFIG_DIR: configDir,
    OPENVAALA_DATA_DIR: dataDir,
    OPENVAALA_CACHE_DIR: cacheDir,
    HOME: homeDir,
    XDG_CONFIG_HOME: path.join(homeDir, ".config"),
    XDG_DATA_HOME: path.join(homeDir, ".local", "share"),
    XDG_CACHE_HOME: path.join(homeDir, ".cache"),
    FAKE_MODEL_KEY: "sk-test",
  };
  return { root, configDir, dataDir, cacheDir, homeDir, env, configPath };
}

/** The environment for the agent: the parent's, minus anything that could select a real model. */
export function agentEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^(OPENAI_|ANTHROPIC_|OPENVAALA_|XDG_)/.test(k) || k === "NODE_OPTIONS" || k === "NODE_TEST_CONTEXT") delete env[k];
  }
  env.RUST_LOG = env.RUST_LOG ?? "";
  return { ...env, ...extra };
}

// ------------------------------------------------------------------------------------------
// ACP schema validation of every line the agent writes
// ------------------------------------------------------------------------------------------

let validatorSingleton = null;

const FORMATS_MODULE = path.join(HERE, "acp-formats.cjs");

/**
 * The ajv validators of every ACP method's messages, compiled once per schema version and kept as
 * ajv's standalone code in the temp folder: compiling them cost each test file one to three
 * seconds of its start-up, loading them takes about 0.1 s.
 */
function precompiledValidators(schemas, refs) {
  const key = crypto.createHash("sha256");
  for (const s of Object.values(schemas)) key.update(JSON.stringify(s));
  key.update(fs.readFileSync(FORMATS_MODULE)).update(require("ajv/package.json").version).update(JSON.stringify(refs));
  // The code requires these by absolute path: another checkout (or one since removed) needs its own file.
  key.update(FORMATS_MODULE).update(require.resolve("ajv/package.json"));
  const file = path.join(os.tmpdir(), `openvaala-acp-validators-${key.digest("hex").slice(0, 16)}.cjs`);
  if (!fs.existsSync(file)) {
    const ajv = newAjv({ source: true, formats: require("ajv/dist/2020")._`require(${FORMATS_MODULE})` });
    for (const [id, s] of Object.entries(schemas)) ajv.addSchema(s, id);
    // The generated code requires ajv's runtime by package name: made absolute, it loads from the temp folder.
    const code = require("ajv/dist/standalone").default(ajv, refs)
      .replace(/require\("(ajv\/dist\/runtime\/[^"]+)"\)/g, (_m, p) => `require(${JSON.stringify(require.resolve(p))})`);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, file);  // two files at once may both write it: each writes it whole
  }
  return require(file);
}

function newAjv(code = {}) {
  const Ajv2020 = require("ajv/dist/2020").default;
  // validateSchema: false: the schema files are the ACP's own; checking them against the JSON
  // Schema meta-schema cost every test file up to a second or two of start-up.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, validateSchema: false, code });
  for (const [name, format] of Object.entries(require(FORMATS_MODULE))) ajv.addFormat(name, format);
  return ajv;
}

export class AcpSchemaValidator {
  constructor(schemaDir = SCHEMA_DIR) {
    this.schemas = {};
    for (const [id, file] of [["acp-stable", "schema.json"], ["acp-unstable", "schema.unstable.json"]]) {
      const s = JSON.parse(fs.readFileSync(path.join(schemaDir, file), "utf8"));
      s.$id = id;
      this.schemas[id] = s;
    }
    // method -> { request, response, notification } def names, stable first, unstable for the rest
    this.index = { stable: this.#buildIndex(this.schemas["acp-stable"]), unstable: this.#buildIndex(this.schemas["acp-unstable"]) };
    const refs = {};
    for (const [id, s] of Object.entries(this.schemas))
      for (const [name, def] of Object.entries(s.$defs)) if (def["x-method"] || name === "Error") refs[`${id}#${name}`] = `${id}#/$defs/${name}`;
    this.cache = new Map(Object.entries(precompiledValidators(this.schemas, refs)));
    // session/update kinds of the stable schema; the others (subagent_update…) are checked against
    // the unstable one, which the agent uses only when the client advertised them.
    this.stableUpdateKinds = new Set(
      this.schemas["acp-stable"].$defs.SessionUpdate.oneOf.map((v) => v.properties?.sessionUpdate?.const),
    );
  }

  #buildIndex(schema) {
    const idx = {};
    for (const [name, def] of Object.entries(schema.$defs)) {
      const m = def["x-method"];
      if (!m) continue;
      idx[m] ??= {};
      const kind = name.endsWith("Request") ? "request" : name.endsWith("Response") ? "response" : name.endsWith("Notification") ? "notification" : null;
      if (kind) idx[m][kind] = { name, side: def["x-side"] };
    }
    return idx;
  }

  /** { schemaId, name, side } for `method`'s `kind`, stable schema first. */
  lookup(method, kind) {
    const st = this.index.stable[method]?.[kind];
    if (st) return { schemaId: "acp-stable", ...st };
    const un = this.index.unstable[method]?.[kind];
    if (un) return { schemaId: "acp-unstable", ...un };
    return null;
  }

  validateDef(schemaId, name, value) {
    const key = `${schemaId}#${name}`;
    let v = this.cache.get(key);
    if (!v) {  // a def no method names (e.g. Usage): compiled here
      if (!this.ajv) {
        this.ajv = newAjv();
        for (const [id, sc] of Object.entries(this.schemas)) this.ajv.addSchema(sc, id);
      }
      v = this.ajv.compile({ $ref: `${schemaId}#/$defs/${name}` });
      this.cache.set(key, v);
    }
    if (v(value)) return null;
    const seen = new Set();
    for (const e of v.errors) seen.add(`${name}${e.instancePath} ${e.message}`);
    return [...seen].join("; ").slice(0, 2000);
  }

  /**
   * Validates one message sent BY THE AGENT. `outgoing` maps JSON.stringify(id) -> method for requests
   * the client sent, so responses can be typed. Returns a list of problems (empty = valid).
   */
  validateAgentMessage(msg, outgoing) {
    const problems = [];
    if (Array.isArray(msg)) return ["agent sent a JSON array (ACP forbids JSON-RPC batches)"];
    if (msg === null || typeof msg !== "object") return ["agent sent a JSON value that is not an object"];
    if (msg.jsonrpc !== "2.0") problems.push(`"jsonrpc" must be "2.0", got ${JSON.stringify(msg.jsonrpc)}`);
    const hasId = Object.hasOwn(msg, "id");
    if (hasId && !(msg.id === null || typeof msg.id === "string" || Number.isInteger(msg.id))) {
      problems.push(`invalid id ${JSON.stringify(msg.id)}`);
    }
    if (typeof msg.method === "string") {
      const kind = hasId ? "request" : "notification";
      if (Object.hasOwn(msg, "result") || Object.hasOwn(msg, "error")) problems.push(`${kind} ${msg.method} also carries result/error`);
      if (hasId && msg.id === null) problems.push(`request ${msg.method} has id null`);
      let def = this.lookup(msg.method, kind);
      if (!def) {
        if (!msg.method.startsWith("_")) problems.push(`agent sent unknown ${kind} method "${msg.method}"`);
        return problems;
      }
      const updateKind = msg.method === "session/update" ? msg.params?.update?.sessionUpdate : undefined;
      if (updateKind !== undefined && !this.stableUpdateKinds.has(updateKind)) {
        def = { schemaId: "acp-unstable", ...this.index.unstable[msg.method][kind] };
      }
      if (def.side === "agent") problems.push(`agent sent ${kind} "${msg.method}", which only the client may send (x-side agent)`);
      const err = this.validateDef(def.schemaId, def.name, msg.params);
      if (err) problems.push(`${kind} ${msg.method} params do not match ${def.name}: ${err}`);
      return problems;
    }
    if (Object.hasOwn(msg, "method")) problems.push(`"method" must be a string`);
    // a response
    if (!hasId) problems.push("response without id");
    const hasResult = Object.hasOwn(msg, "result");
    const hasError = Object.hasOwn(msg, "error");
    if (hasResult === hasError) problems.push("a response must carry exactly one of result / error");
    const extra = Object.keys(msg).filter((k) => !["jsonrpc", "id", "result", "error"].includes(k));
    if (extra.length) problems.push(`unexpected response members: ${extra.join(", ")}`);
    const method = hasId ? outgoing.get(JSON.stringify(msg.id)) : undefined;
    if (hasError) {
      const err = this.validateDef("acp-stable", "Error", msg.error);
      if (err) problems.push(`error object invalid: ${err}`);
      if (!Number.isInteger(msg.error?.code)) problems.push("error.code must be an integer");
      if (hasId && msg.id !== null && method === undefined) problems.push(`error response to unknown id ${JSON.stringify(msg.id)}`);
      return problems;
    }
    if (method === INVALID_REQUEST) {
      problems.push(`success response to an invalid request (id ${JSON.stringify(msg.id)})`);
      return problems;
    }
    if (hasId && msg.id === null) problems.push("success response with id null");
    if (method === undefined) {
      problems.push(`response to unknown id ${JSON.stringify(msg.id)}`);
      return problems;
    }
    const def = this.lookup(method, "response");
    if (!def) {
      const legacy = LEGACY_RESPONSES[method];
      if (legacy) {
        const err = legacy(msg.result);
        if (err) problems.push(`response to legacy ${method}: ${err}`);
      } else if (!method.startsWith("_")) problems.push(`no schema for the response of "${method}"`);
      return problems;
    }
    const err = this.validateDef(def.schemaId, def.name, msg.result);
    if (err) problems.push(`response to ${method} does not match ${def.name}: ${err}`);
    return problems;
  }
}

// Methods the current schema dropped that the agent still answers for clients built on older
// SDKs, with the check of their response as those schemas had it.
const LEGACY_RESPONSES = {
  // SetSessionModelResponse (ACP before 2.4.0): an object, at most `_meta`.
  "session/set_model": (r) =>
    r && typeof r === "object" && !Array.isArray(r) && Object.keys(r).every((k) => k === "_meta")
      ? null
      : `SetSessionModelResponse must be an object with at most _meta, got ${JSON.stringify(r)}`,
};

export function schemaValidator() {
  validatorSingleton ??= new AcpSchemaValidator();
  return validatorSingleton;
}

/** Splits a byte stream into lines (Buffers, without the trailing \n). */
const INVALID_REQUEST = "<invalid request>";

class LineSplitter {
  constructor(onLine) {
    this.onLine = onLine;
    this.parts = [];
  }
  push(chunk) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      this.parts.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.parts);
      this.parts = [];
      this.onLine(line);
      start = nl + 1;
    }
    if (start < chunk.length) this.parts.push(chunk.subarray(start));
  }
  end() {
    if (this.parts.length) {
      const line = Buffer.concat(this.parts);
      this.parts = [];
      if (line.length) this.onLine(line, { unterminated: true });
    }
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
function isUtf8(buf) {
  try {
    strictUtf8.decode(buf);
    return true;
  } catch {
    return false;
  }
}

/** Shared wire recorder: parses both directions, validates agent output, keeps a transcript. */
class WireRecorder {
  constructor(label) {
    this.label = label;
    this.validator = schemaValidator();
    this.outgoing = new Map(); // JSON.stringify(id) -> method (client -> agent requests)
    this.transcript = []; // { dir: "->" | "<-", at, msg | raw }
    this.schemaErrors = [];
    this.fromAgent = []; // parsed messages from the agent
    this.listeners = new Set();
    this.t0 = Date.now();
  }
  clientLine(buf) {
    const text = buf.toString("utf8");
    if (!text.trim()) return;
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      this.transcript.push({ dir: "->", at: Date.now() - this.t0, raw: text.slice(0, 500) });
      return;
    }
    this.transcript.push({ dir: "->", at: Date.now() - this.t0, msg });
    // any client message with an id that is not itself a response expects an answer (even an invalid one)
    if (msg && typeof msg === "object" && Object.hasOwn(msg, "id") && !Object.hasOwn(msg, "result") && !Object.hasOwn(msg, "error")) {
      this.outgoing.set(JSON.stringify(msg.id), typeof msg.method === "string" ? msg.method : INVALID_REQUEST);
    }
  }
  agentLine(buf, { unterminated = false } = {}) {
    const text = buf.toString("utf8");
    const at = Date.now() - this.t0;
    if (unterminated) this.schemaErrors.push(`stdout ended with an unterminated line: ${JSON.stringify(text.slice(0, 200))}`);
    if (text.endsWith("\r")) this.schemaErrors.push("stdout line ends with CR");
    if (!isUtf8(buf)) this.schemaErrors.push(`stdout line is not valid UTF-8 (JSON must be): ${JSON.stringify(text.slice(0, 200))}`);
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      this.schemaErrors.push(`non-JSON line on stdout: ${JSON.stringify(text.slice(0, 300))}`);
      this.transcript.push({ dir: "<-", at, raw: text.slice(0, 500) });
      return;
    }
    this.transcript.push({ dir: "<-", at, msg });
    this.fromAgent.push(msg);
    for (const p of this.validator.validateAgentMessage(msg, this.outgoing)) {
      this.schemaErrors.push(`${p}\n    in: ${JSON.stringify(msg).slice(0, 600)}`);
    }
    for (const l of this.listeners) l(msg);
  }
  format(limit = 60) {
    const items = this.transcript.slice(-limit);
    return items
      .map((e) => `${String(e.at).padStart(6)}ms ${e.dir} ${e.msg ? JSON.stringify(e.msg) : e.raw}`.slice(0, 700))
      .join("\n");
  }
}

// ------------------------------------------------------------------------------------------
// client-side terminals (real child processes)
// ------------------------------------------------------------------------------------------

class ClientTerminal {
  constructor(id, params) {
    this.id = id;
    this.params = params;
    this.command = params.command;
    this.args = params.args ?? [];
    this.limit = params.outputByteLimit ?? null;
    this.buf = Buffer.alloc(0);
    this.truncated = false;
    this.exitStatus = null;
    this.killed = false;
    this.released = false;
    this.spawnError = null;
    this.events = [];
    const env = { ...process.env };
    for (const e of params.env ?? []) env[e.name] = e.value;
    this.proc = spawn(this.command, this.args, {
      cwd: params.cwd ?? undefined,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.proc.once("error", (e) => {
        this.spawnError = e;
        this.append(Buffer.from(`spawn ${this.command}: ${e.message}\n`));
        this.exitStatus = { exitCode: 127, signal: null };
        resolve(this.exitStatus);
      });
      this.proc.once("close", (code, signal) => {
        if (!this.exitStatus) this.exitStatus = { exitCode: code, signal: signal ?? null };
        resolve(this.exitStatus);
      });
    });
    this.proc.stdout.on("data", (d) => this.append(d));
    this.proc.stderr.on("data", (d) => this.append(d));
  }
  append(d) {
    this.buf = Buffer.concat([this.buf, d]);
    if (this.limit !== null && this.buf.length > this.limit) {
      let start = this.buf.length - this.limit;
      // never cut a UTF-8 character: skip continuation bytes
      while (start < this.buf.length && (this.buf[start] & 0xc0) === 0x80) start++;
      this.buf = this.buf.subarray(start);
      this.truncated = true;
    }
  }
  get output() {
    return this.buf.toString("utf8");
  }
  get running() {
    return this.exitStatus === null;
  }
  kill() {
    this.events.push("kill");
    this.killed = true;
    if (this.running && this.proc.pid) {
      try {
        process.kill(-this.proc.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }
  release() {
    this.events.push("release");
    this.released = true;
    if (this.running && this.proc.pid) {
      this.events.push("killed-on-release");
      try {
        process.kill(-this.proc.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }
}

// ------------------------------------------------------------------------------------------
// startAgent: SDK-driven client
// ------------------------------------------------------------------------------------------

/**
 * Permission policies: "allow_once" | "allow_always" | "reject_once" | "reject_always" | "cancelled",
 * or a function (params, ctx) => policy | RequestPermissionResponse | Promise of either.
 */
function choosePermission(policy, params) {
  if (policy && typeof policy === "object" && policy.outcome) return policy;
  if (policy === "cancelled") return { outcome: { outcome: "cancelled" } };
  const options = params.options ?? [];
  let opt = options.find((o) => o.kind === policy);
  if (!opt && /^allow/.test(policy)) opt = options.find((o) => o.kind?.startsWith("allow"));
  if (!opt && /^reject/.test(policy)) opt = options.find((o) => o.kind?.startsWith("reject"));
  if (!opt) throw new acp.RequestError(-32603, `test client: no permission option of kind ${policy} in ${JSON.stringify(options)}`);
  return { outcome: { outcome: "selected", optionId: opt.optionId } };
}

export const DEFAULT_CLIENT_CAPABILITIES = Object.freeze({
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
});

/**
 * Spawns the agent and connects the SDK client.
 * Options:
 *   env, cwd, args (default ["acp"]), bin
 *   clientCapabilities   (used by initialize(); default fs read/write + terminal)
 *   permission           policy (default "allow_once"), or onPermission(params, ctx) returning a policy or a response
 *   onFsRead / onFsWrite (params, ctx) => response   (override the real-disk defaults)
 *   onTerminal: { create, output, waitForExit, kill, release }   overrides
 *   onRequest(method, params)  fallback for other client requests (default: method not found)
 *   onUpdate(params)     called for every session/update as it arrives (after it is recorded)
 *   echoStderr           pipe the agent's stderr to ours (also env OPENVAALA_TEST_STDERR=1)
 *   unstableSdk          the SDK's unstable client, which parses unstable messages (subagent_update…)
 *                        instead of dropping them
 */
export async function startAgent(opts = {}) {
  const {
    env = {},
    cwd = process.cwd(),
    args = ["acp"],
    bin = agentBinary(),
    clientCapabilities = DEFAULT_CLIENT_CAPABILITIES,
    permission = "allow_once",
    onPermission = null,
    onFsRead = null,
    onFsWrite = null,
    onTerminal = {},
    onRequest = null,
    onUpdate = null,
    echoStderr = !!process.env.OPENVAALA_TEST_STDERR,
    unstableSdk = false,
  } = opts;
  const sdk = unstableSdk ? acpUnstable : acp;

  const child = spawn(bin, args, {
    cwd,
    env: agentEnv(env),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const spawnFailed = new Promise((resolve) => child.once("error", resolve));
  const wire = new WireRecorder("sdk");
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d.toString("utf8");
    if (echoStderr) process.stderr.write(d);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let exitInfo = null;
  exited.then((e) => { exitInfo = e; });

  // stdout: tee into the validator and into the SDK's stream
  const toSdk = new PassThrough();
  const agentSplitter = new LineSplitter((line, o) => wire.agentLine(line, o));
  child.stdout.on("data", (d) => {
    agentSplitter.push(d);
    toSdk.write(d);
  });
  child.stdout.on("end", () => {
    agentSplitter.end();
    toSdk.end();
  });
  // stdin: record what the SDK sends (ids -> methods)
  const clientSplitter = new LineSplitter((line) => wire.clientLine(line));
  child.stdin.on("error", () => {}); // EPIPE after the agent died: reported through `exited`
  const toAgent = new Writable({
    write(chunk, _enc, cb) {
      clientSplitter.push(Buffer.from(chunk));
      if (child.stdin.destroyed || child.stdin.writableEnded) return cb();
      child.stdin.write(chunk, () => cb()); // write errors (EPIPE) surface through `exited`
    },
    final(cb) {
      child.stdin.end();
      cb();
    },
  });

  const updates = []; // SessionNotification params, in arrival order
  const clientRequests = []; // { method, params, at, response?, error? }
  const terminals = new Map();
  const sessionCwds = new Map(); // sessionId -> cwd (terminals default to the session's cwd, as editors do)
  let terminalCounter = 0;
  const updateWaiters = new Set();
  const requestWaiters = new Set();
  const t0 = Date.now();

  function recordRequest(method, params) {
    const rec = { method, params, at: Date.now() - t0 };
    clientRequests.push(rec);
    for (const w of requestWaiters) w();
    return rec;
  }
  async function handle(method, params, ctx, fn) {
    const rec = recordRequest(method, params);
    try {
      const r = await fn(params, ctx);
      rec.response = r;
      return r;
    } catch (e) {
      rec.error = { code: e?.code, message: e?.message };
      throw e;
    }
  }
  function checkAbsolute(method, p) {
    if (typeof p === "string" && !path.isAbsolute(p)) wire.schemaErrors.push(`${method}: path is not absolute: ${p}`);
  }
  function terminalOf(params) {
    const t = terminals.get(params.terminalId);
    if (!t) throw new acp.RequestError(-32002, `test client: unknown terminal ${params.terminalId}`);
    return t;
  }

  const defaults = {
    permission: async (params, ctx) => {
      const policy = onPermission ? await onPermission(params, ctx) : permission;
      return choosePermission(policy ?? permission, params);
    },
    fsRead: async (params) => {
      checkAbsolute("fs/read_text_file", params.path);
      let content;
      try {
        content = fs.readFileSync(params.path, "utf8");
      } catch (e) {
        throw new acp.RequestError(-32002, `Resource not found: ${params.path} (${e.code})`);
      }
      if (params.line != null || params.limit != null) {
        const lines = content.split("\n");
        const start = Math.max(0, (params.line ?? 1) - 1);
        const end = params.limit != null ? start + params.limit : lines.length;
        content = lines.slice(start, end).join("\n");
      }
      return { content };
    },
    fsWrite: async (params) => {
      checkAbsolute("fs/write_text_file", params.path);
      fs.mkdirSync(path.dirname(params.path), { recursive: true });
      fs.writeFileSync(params.path, params.content);
      return {};
    },
    terminalCreate: async (params) => {
      if (params.cwd) checkAbsolute("terminal/create cwd", params.cwd);
      const id = `term-${++terminalCounter}`;
      const t = new ClientTerminal(id, { ...params, cwd: params.cwd ?? sessionCwds.get(params.sessionId) ?? cwd });
      terminals.set(id, t);
      // surface spawn failures (e.g. ENOENT because a shell command line was passed as `command`)
      await Promise.race([sleep(30), t.exited]);
      if (t.spawnError) {
        terminals.delete(id);
        throw new acp.RequestError(-32603, `test client: cannot spawn command ${JSON.stringify(params.command)} with args ${JSON.stringify(params.args ?? [])}: ${t.spawnError.message}`);
      }
      return { terminalId: id };
    },
    terminalOutput: async (params) => {
      const t = terminalOf(params);
      const r = { output: t.output, truncated: t.truncated };
      if (t.exitStatus) r.exitStatus = t.exitStatus;
      return r;
    },
    terminalWait: async (params) => {
      const t = terminalOf(params);
      const st = await t.exited;
      return { exitCode: st.exitCode, signal: st.signal };
    },
    terminalKill: async (params) => {
      terminalOf(params).kill();
      return {};
    },
    terminalRelease: async (params) => {
      terminalOf(params).release();
      return {};
    },
  };

  const app = sdk
    .client({ name: "openvaala-integration-tests" })
    .onNotification(sdk.methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const w of updateWaiters) w();
      if (onUpdate) onUpdate(params);
    })
    .onNotification("*", () => {})
    .onRequest(sdk.methods.client.session.requestPermission, (ctx) =>
      handle("session/request_permission", ctx.params, ctx, defaults.permission))
    .onRequest(sdk.methods.client.fs.readTextFile, (ctx) =>
      handle("fs/read_text_file", ctx.params, ctx, onFsRead ?? defaults.fsRead))
    .onRequest(sdk.methods.client.fs.writeTextFile, (ctx) =>
      handle("fs/write_text_file", ctx.params, ctx, onFsWrite ?? defaults.fsWrite))
    .onRequest(sdk.methods.client.terminal.create, (ctx) =>
      handle("terminal/create", ctx.params, ctx, onTerminal.create ?? defaults.terminalCreate))
    .onRequest(sdk.methods.client.terminal.output, (ctx) =>
      handle("terminal/output", ctx.params, ctx, onTerminal.output ?? defaults.terminalOutput))
    .onRequest(sdk.methods.client.terminal.waitForExit, (ctx) =>
      handle("terminal/wait_for_exit", ctx.params, ctx, onTerminal.waitForExit ?? defaults.terminalWait))
    .onRequest(sdk.methods.client.terminal.kill, (ctx) =>
      handle("terminal/kill", ctx.params, ctx, onTerminal.kill ?? defaults.terminalKill))
    .onRequest(sdk.methods.client.terminal.release, (ctx) =>
      handle("terminal/release", ctx.params, ctx, onTerminal.release ?? defaults.terminalRelease))
    .onRequest("*", (ctx) =>
      handle(ctx.method, ctx.params, ctx, async (params) => {
        if (onRequest) return onRequest(ctx.method, params, ctx);
        throw new sdk.RequestError(-32601, `Method not found: ${ctx.method}`);
      }));

  const stream = sdk.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(toSdk));
  const connection = app.connect(stream);
  const agent = connection.agent;

  const early = await Promise.race([spawnFailed, sleep(0).then(() => null)]);
  if (early) throw new Error(`cannot start ${bin}: ${early.message}`);

  /** agent.request with a timeout; a dropped connection reports how the agent exited */
  function call(method, params, timeout) {
    const p = (async () => {
      try {
        return await withTimeout(agent.request(method, params), timeout, method);
      } catch (e) {
        if (typeof e?.code !== "number" && e && typeof e === "object") {
          await Promise.race([exited, sleep(500)]);
          if (exitInfo && !/agent exited during/.test(e.message)) {
            e.message += ` (agent exited during ${method}: code ${exitInfo.code}, signal ${exitInfo.signal})`;
          }
        }
        throw e;
      }
    })();
    p.catch(() => {}); // callers may await later (cancel tests): never an unhandled rejection
    return p;
  }

  let closed = false;
  const h = {
    child,
    pid: child.pid,
    agent,
    connection,
    wire,
    updates,
    clientRequests,
    terminals,
    exited,
    clientCapabilities,
    get exitInfo() {
      return exitInfo;
    },
    get stderr() {
      return stderr;
    },
    get schemaErrors() {
      return wire.schemaErrors;
    },
    /** initialize with protocol version 1 and this harness's client capabilities */
    /** any agent method, with a timeout */
    request(method, params, { timeout = 10000 } = {}) {
      return call(method, params, timeout);
    },
    initialize(params = {}) {
      return call("initialize", {
        protocolVersion: 1,
        clientCapabilities,
        clientInfo: { name: "openvaala-integration-tests", version: "0.0.0" },
        ...params,
      }, 10000);
    },
    async newSession(sessionCwd, extra = {}) {
      const r = await call("session/new", { cwd: sessionCwd, mcpServers: [], ...extra }, 10000);
      if (r?.sessionId) sessionCwds.set(r.sessionId, sessionCwd);
      return r;
    },
    prompt(sessionId, prompt, { timeout = 30000 } = {}) {
      const blocks = typeof prompt === "string" ? [{ type: "text", text: prompt }] : Array.isArray(prompt) ? prompt : [prompt];
      return call("session/prompt", { sessionId, prompt: blocks }, timeout);
    },
    cancel(sessionId) {
      return agent.notify("session/cancel", { sessionId });
    },
    setMode(sessionId, modeId) {
      return call("session/set_mode", { sessionId, modeId }, 10000);
    },
    /** updates for one session, optionally one sessionUpdate kind */
    updatesOf(sessionId, kind) {
      return updates
        .filter((u) => !sessionId || u.sessionId === sessionId)
        .map((u) => u.update)
        .filter((u) => !kind || u.sessionUpdate === kind);
    },
    /** concatenated agent_message_chunk text of a session */
    textOf(sessionId, kind = "agent_message_chunk") {
      return h.updatesOf(sessionId, kind)
        .filter((u) => u.content?.type === "text")
        .map((u) => u.content.text)
        .join("");
    },
    /** notices the agent showed the user (quoted "> " lines between blank lines in agent messages) */
    noticesOf(sessionId) {
      return [...h.textOf(sessionId).matchAll(/\n\n> ([^\n]*)\n\n/g)].map((m) => m[1]);
    },
    /** the model's answer: agent message text without the notices */
    answerOf(sessionId) {
      return h.textOf(sessionId).replace(/\n\n> [^\n]*\n\n/g, "");
    },
    requestsOf(method) {
      return clientRequests.filter((r) => r.method === method);
    },
    /** resolves with the first update (params) matching pred (already received or future) */
    waitForUpdate(pred, { timeout = 10000, label = "session/update" } = {}) {
      return waitFor(() => updates.find(pred), updateWaiters, timeout, label);
    },
    waitForRequest(method, pred = () => true, { timeout = 10000 } = {}) {
      return waitFor(() => clientRequests.find((r) => r.method === method && pred(r.params)), requestWaiters, timeout, `client request ${method}`);
    },
    /** waitUntil that fails fast when the agent dies */
    waitUntil(fn, opts = {}) {
      return waitUntil(() => {
        if (exitInfo) throw new Error(`agent exited (${JSON.stringify(exitInfo)}) while waiting for ${opts.label ?? "condition"}`);
        return fn();
      }, opts);
    },
    /** human-readable dump for failure messages */
    diagnostics() {
      const st = stderr.length > 4000 ? "…" + stderr.slice(-4000) : stderr;
      return (
        `\n--- agent ${bin} pid ${child.pid}, exit ${JSON.stringify(exitInfo)}` +
        `\n--- schema errors (${wire.schemaErrors.length}):\n${wire.schemaErrors.slice(0, 10).join("\n")}` +
        `\n--- last wire messages:\n${wire.format(40)}` +
        `\n--- agent stderr (tail):\n${st}`
      );
    },
    assertSchemaClean() {
      assert.deepEqual(wire.schemaErrors, [], `agent output violates the ACP schema:\n${wire.schemaErrors.join("\n")}`);
    },
    killTerminals() {
      for (const t of terminals.values()) if (t.running) t.kill();
    },
    /** SIGKILL the whole process group */
    kill() {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    },
    /** end stdin, wait up to `grace` ms for exit, then kill the process group */
    async close({ grace = 2000 } = {}) {
      if (closed) return exitInfo;
      closed = true;
      try {
        connection.close();
      } catch {
        /* ignore */
      }
      try {
        child.stdin.end();
      } catch {
        /* ignore */
      }
      const r = await Promise.race([exited, sleep(grace).then(() => null)]);
      h.kill(); // the group: whatever the agent left behind
      h.killTerminals();
      return r ?? (await exited);
    },
  };

  function waitFor(find, waiters, timeout, label) {
    const hit = find();
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const check = () => {
        const v = find();
        if (v) {
          cleanup();
          resolve(v);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timeout after ${timeout * SLACK} ms waiting for ${label}`));
      }, timeout * SLACK);
      const onExit = () => {
        setTimeout(() => {
          if (!find()) {
            cleanup();
            reject(new Error(`agent exited (${JSON.stringify(exitInfo)}) while waiting for ${label}`));
          }
        }, 50);
      };
      exited.then(onExit);
      function cleanup() {
        clearTimeout(timer);
        waiters.delete(check);
      }
      waiters.add(check);
    });
  }

  return h;
}

// ------------------------------------------------------------------------------------------
// startRawAgent: raw lines, no SDK (framing tests)
// ------------------------------------------------------------------------------------------

export async function startRawAgent({ env = {}, cwd = process.cwd(), args = ["acp"], bin = agentBinary() } = {}) {
  const child = spawn(bin, args, { cwd, env: agentEnv(env), stdio: ["pipe", "pipe", "pipe"], detached: true });
  const wire = new WireRecorder("raw");
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d.toString("utf8");
    if (process.env.OPENVAALA_TEST_STDERR) process.stderr.write(d);
  });
  child.stdin.on("error", () => {});
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let exitInfo = null;
  exited.then((e) => { exitInfo = e; });
  const lines = []; // raw strings from stdout
  const waiters = new Set();
  const splitter = new LineSplitter((line, o) => {
    lines.push(line.toString("utf8"));
    wire.agentLine(line, o);
    for (const w of waiters) w();
  });
  child.stdout.on("data", (d) => splitter.push(d));
  child.stdout.on("end", () => splitter.end());
  await new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });

  const h = {
    child,
    lines,
    wire,
    exited,
    get messages() {
      return wire.fromAgent;
    },
    get stderr() {
      return stderr;
    },
    get exitInfo() {
      return exitInfo;
    },
    get schemaErrors() {
      return wire.schemaErrors;
    },
    /** writes a raw line: a string (a "\n" is appended unless present), a Buffer (as is), or an object (JSON) */
    send(data) {
      let buf;
      if (Buffer.isBuffer(data)) buf = data;
      else if (typeof data === "string") buf = Buffer.from(data.endsWith("\n") ? data : data + "\n");
      else buf = Buffer.from(JSON.stringify(data) + "\n");
      const ls = new LineSplitter((l) => wire.clientLine(l));
      ls.push(buf);
      return new Promise((resolve, reject) => child.stdin.write(buf, (e) => (e ? reject(e) : resolve())));
    },
    /** waits for the first agent message matching pred (searching from index `from`) */
    waitForMessage(pred, { timeout = 5000, from = 0, label = "message" } = {}) {
      const find = () => wire.fromAgent.slice(from).find(pred);
      const hit = find();
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const check = () => {
          const v = find();
          if (v) {
            done();
            resolve(v);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timeout after ${timeout * SLACK} ms waiting for ${label}; got: ${lines.slice(-5).join(" | ").slice(0, 1500)}; stderr: ${stderr.slice(-1000)}`));
        }, timeout * SLACK);
        exited.then(() => setTimeout(() => {
          if (find()) return;
          done();
          reject(new Error(`agent exited (code ${exitInfo?.code}, signal ${exitInfo?.signal}) while waiting for ${label}; stderr: ${stderr.slice(-1000)}`));
        }, 100));
        function done() {
          clearTimeout(timer);
          waiters.delete(check);
        }
        waiters.add(check);
      });
    },
    /** sends a request and waits for the response with the same id */
    async request(method, params, id = crypto.randomUUID(), { timeout = 10000 } = {}) {
      const start = wire.fromAgent.length;
      const msg = { jsonrpc: "2.0", id, method };
      if (params !== undefined) msg.params = params;
      await h.send(msg);
      return h.waitForMessage((m) => m && !("method" in m) && m.id === id, { timeout, from: start, label: `response to ${method} id ${JSON.stringify(id)}` });
    },
    /** responses with id null (errors for unparsable / invalid messages) */
    nullIdResponses() {
      return wire.fromAgent.filter((m) => m && m.id === null && !("method" in m));
    },
    diagnostics() {
      return `\n--- raw agent exit ${JSON.stringify(exitInfo)}\n--- wire:\n${wire.format(30)}\n--- stderr:\n${stderr.slice(-3000)}`;
    },
    assertSchemaClean() {
      assert.deepEqual(wire.schemaErrors, [], `agent output violates the ACP schema:\n${wire.schemaErrors.join("\n")}`);
    },
    kill() {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    },
    async close({ grace = 2000 } = {}) {
      try {
        child.stdin.end();
      } catch {
        /* ignore */
      }
      const r = await Promise.race([exited, sleep(grace).then(() => null)]);
      h.kill();
      return r ?? (await exited);
    },
  };
  return h;
}

// ------------------------------------------------------------------------------------------
// scenario(): node:test wrapper that owns resources and appends diagnostics to failures
// ------------------------------------------------------------------------------------------

export class ScenarioContext {
  constructor(t) {
    this.t = t;
    this.cleanups = [];
    this.agents = [];
    this.fakes = [];
  }
  defer(fn) {
    this.cleanups.push(fn);
  }
  async fakeModel(script = [], opts = {}) {
    const { startFakeModel } = await import("../fake-model/fake-model-server.mjs");
    const f = await startFakeModel({ script, ...opts });
    this.fakes.push(f);
    this.defer(() => f.close());
    return f;
  }
  workspace(files) {
    return makeWorkspace(files);
  }
  configHome(opts) {
    return makeConfigHome(opts);
  }
  async agent(opts) {
    const h = await startAgent(opts);
    this.agents.push(h);
    this.defer(() => h.close());
    return h;
  }
  async rawAgent(opts) {
    const h = await startRawAgent(opts);
    this.agents.push(h);
    this.defer(() => h.close());
    return h;
  }
  /**
   * one-stop setup: fake model + workspace + config + started, initialized agent. `configFiles`:
   * more files of the config root ({"executors/box.yaml": …}), written before the agent starts
   * (it reads its configuration once); those starting with "#!" are made executable.
   */
  async setup({ provider = "openai", script = [], files = {}, extraYaml = "", configFiles = {}, configOpts = {}, agentOpts = {}, fakeOpts = {}, initialize = true } = {}) {
    const fake = await this.fakeModel(script, fakeOpts);
    const ws = this.workspace(files);
    const home = this.configHome({ provider, modelUrl: fake.url, extraYaml, ...configOpts });
    writeFiles(home.configDir, configFiles);
    for (const [f, text] of Object.entries(configFiles)) if (text.startsWith("#!")) fs.chmodSync(path.join(home.configDir, f), 0o755);
    const h = await this.agent({ env: home.env, cwd: ws, ...agentOpts });
    if (initialize) await h.initialize();
    return { fake, ws, home, h };
  }
  diagnostics() {
    let s = "";
    for (const a of this.agents) s += a.diagnostics();
    for (const f of this.fakes) {
      s += `\n--- fake model: ${f.requests.length} request(s), ${f.pending} scripted step(s) left`;
      f.requests.forEach((r, i) => {
        s += `\n  #${i + 1} ${r.path} ${JSON.stringify(r.body).slice(0, 1500)}`;
      });
    }
    return s;
  }
  async cleanup() {
    for (const fn of this.cleanups.reverse()) {
      try {
        await fn();
      } catch {
        /* best effort */
      }
    }
  }
}

const SKIP_REASON = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built (set OPENVAALA_BIN)`;

/** Like node:test `test`, with a ScenarioContext; skipped when the binary is missing. */
export function scenario(name, fn, { timeout = 30000, skip = false } = {}) {
  return test(name, { timeout: timeout * SLACK, skip: skip || SKIP_REASON }, async (t) => {
    const ctx = new ScenarioContext(t);
    try {
      await fn(ctx, t);
    } catch (e) {
      try {
        await Promise.race([Promise.all(ctx.agents.map((a) => a.exited)), sleep(300)]);
        const d = ctx.diagnostics();
        if (e && typeof e === "object") {
          e.message = `${e.message}${d}`;
        }
      } catch {
        /* ignore */
      }
      throw e;
    } finally {
      await ctx.cleanup();
    }
  });
}

// ------------------------------------------------------------------------------------------
// helpers over recorded model requests
// ------------------------------------------------------------------------------------------

/** All tool_call + tool_call_update updates of a session grouped by toolCallId, in order. */
export function toolCallsById(h, sessionId) {
  const byId = new Map();
  for (const u of h.updatesOf(sessionId)) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    if (!byId.has(u.toolCallId)) byId.set(u.toolCallId, []);
    byId.get(u.toolCallId).push(u);
  }
  return byId;
}

/** The statuses a tool call went through, as the editor saw them (tool_call, then tool_call_update). */
export function toolCallStatuses(h, sessionId, toolCallId) {
  return (toolCallsById(h, sessionId).get(toolCallId) ?? []).map((u) => u.status).filter(Boolean);
}

/** The last text the editor was shown in a tool call's content (what it says about its outcome). */
export function toolCallText(h, sessionId, toolCallId) {
  const withContent = (toolCallsById(h, sessionId).get(toolCallId) ?? []).filter((u) => Array.isArray(u.content));
  const content = withContent.at(-1)?.content ?? [];
  return content.map((c) => (c.type === "content" && c.content?.type === "text" ? c.content.text : "")).join("\n");
}

/** Names of the tools offered in a recorded model request (OpenAI or Anthropic). */
export function toolNames(req) {
  const tools = req.body?.tools ?? [];
  return tools.map((t) => t.function?.name ?? t.name).filter(Boolean);
}

/** All text a recorded request carries from the user (last user message), both formats. */
export function userText(req) {
  const msgs = req.body?.messages ?? [];
  const out = [];
  for (const m of msgs) {
    if (m.role !== "user") continue;
    if (typeof m.content === "string") out.push(m.content);
    else for (const b of m.content ?? []) if (b.type === "text") out.push(b.text);
  }
  return out.join("\n");
}

/** Tool results in a recorded request: [{ id, content (string) , isError? }] for both formats. */
export function toolResults(req) {
  const msgs = req.body?.messages ?? [];
  const out = [];
  for (const m of msgs) {
    if (m.role === "tool") {
      const content = typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("");
      out.push({ id: m.tool_call_id, content });
    } else if (Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type !== "tool_result") continue;
        const content = typeof b.content === "string" ? b.content : (b.content ?? []).map((c) => c.text ?? "").join("");
        out.push({ id: b.tool_use_id, content, isError: b.is_error });
      }
    }
  }
  return out;
}

/**
 * The text of the tool result for `toolCallId` in a recorded request (what the model is told
 * about that call), both formats. Fails, listing the results there are, when there is none.
 */
export function toolResultText(req, toolCallId) {
  const all = toolResults(req);
  const r = all.find((x) => x.id === toolCallId);
  assert.ok(r, `the model request carries a tool result for ${toolCallId}; it has ${JSON.stringify(all).slice(0, 1500)}`);
  return r.content;
}

/** The result the model was last sent for tool call `toolCallId`; undefined when none was. */
export function lastToolResult(fake, toolCallId) {
  for (let i = fake.requests.length - 1; i >= 0; i--)
    if (toolResults(fake.requests[i]).some((x) => x.id === toolCallId)) return toolResultText(fake.requests[i], toolCallId);
  return undefined;
}

/** `executors/<id>.yaml` config files for ctx.setup's `configFiles`. */
export const executorFiles = (executors) => Object.fromEntries(Object.entries(executors).map(([id, yaml]) => [`executors/${id}.yaml`, yaml]));

/** The system prompt of a recorded request (OpenAI system/developer message or Anthropic `system`). */
export function systemPrompt(req) {
  const b = req.body ?? {};
  if (b.system !== undefined) return typeof b.system === "string" ? b.system : b.system.map((x) => x.text ?? "").join("\n");
  const m = (b.messages ?? []).filter((x) => x.role === "system" || x.role === "developer");
  return m.map((x) => (typeof x.content === "string" ? x.content : x.content.map((c) => c.text ?? "").join(""))).join("\n");
}

/** pgrep -f PATTERN -> pids (excluding this process) */
export function pgrep(pattern) {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number)
      .filter((p) => p !== process.pid);
  } catch {
    return [];
  }
}

/** SIGKILLs every process whose command line matches `pattern` (a scenario's leftovers). */
export function killMatching(pattern) {
  for (const pid of pgrep(pattern)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
}

/**
 * The pids of every running process whose process group is one of `pgids` (a Set). Zombies have
 * ended and are left out: once the agent has exited, reaping them is its parent's (init's) job.
 */
export function processesInGroups(pgids) {
  const out = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z" && pgids.has(Number(pgrp))) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Whether `pid` is a running process (a zombie has ended). */
export function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** "pid: command line" for each pid (for failure messages). */
export function describePids(pids) {
  return pids
    .map((p) => {
      try {
        return `${p}: ${fs.readFileSync(`/proc/${p}/cmdline`, "utf8").replace(/\0/g, " ").trim()}`;
      } catch {
        return `${p}: (gone)`;
      }
    })
    .join("; ");
}

/**
 * Polls `find()` (pids, e.g. `() => pgrep(marker)`) until it is empty; resolves with the time
 * that took. After `within` ms (times SLACK: how fast is bench/'s to say), fails with `promise`
 * and the processes still running.
 */
export async function assertProcessesGone(find, { within = 2000, interval = 25, promise = "no process is left" } = {}) {
  const t0 = Date.now();
  for (;;) {
    const left = find();
    if (left.length === 0) return Date.now() - t0;
    if (Date.now() - t0 > within * SLACK) {
      assert.fail(`${promise}: ${Date.now() - t0} ms later, ${left.length} still running: ${describePids(left)}`);
    }
    await sleep(interval);
  }
}

export { acp };
