// session/load of a long session as a user sees it: a FRESH `openvaala acp` per run, `initialize`,
// then `session/load` of an N-message session; the time from the session/load request to its
// response (every replayed session/update arrives before it: ACP streams the history first) and
// the agent's peak RSS (VmHWM of /proc/<pid>/status, read once the agent has been idle for 200 ms
// after the response: what it does after answering, such as reading the conversation, counts).
//
// The journal is written here in the format the server writes (runtime/sessions/records.cpp),
// turn by turn as a real turn journals it (agent_loop.cpp, tool_router.cpp): the user message with
// its prompt blocks; the assistant's reasoning, text and one tool call; a usage record; the tool
// call's pending state (title, name, kind, locations, rawInput); its completed state (content and
// rawOutput); the tool result; the final answer; a usage record; the turn end. Four messages a
// turn: 20,000 messages are 5,000 turns.
//
//   node bench/session_load_bench.mjs [--messages 20000] [--runs 5] [--bin LABEL=PATH ...]
//       binaries run in turn (A B A B …); medians (min–max). Default binary: $OPENVAALA_BIN or
//       build/openvaala.
//   node bench/session_load_bench.mjs --floor [--messages N] [--runs N] [--bin ...]
//       also runs, in turn with the binaries, the floor: a stand-in agent that answers initialize
//       and session/load with the very bytes the first binary sent (recorded once), from a file,
//       with no parsing and no encoding: what the pipe and this client cost alone.
//   node bench/session_load_bench.mjs --native [--floor] [--messages N] [--runs N] [--bin ...]
//       the same runs from a native client (bench/session_load_client.cpp: posix_spawn and pipes,
//       as Zed launches agents) instead of this Node one, whose own reading of the updates is most
//       of the floor here. Build it first: cmake --build build --target session_load_client.
//   node bench/session_load_bench.mjs --check [--messages N] --bin A=PATH --bin B=PATH
//       loads the session once with each binary and compares every replayed notification, byte
//       for byte (exit 1 on a difference).
//   node bench/session_load_bench.mjs --prepare DIR [--messages N]
//       writes the config/data home into DIR (kept) and prints it; then
//   node bench/session_load_bench.mjs --once --home DIR [--bin PATH]
//       one fresh process, one load, one line of figures, exit: for timing the whole command from
//       outside (e.g. /usr/bin/time -v).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { agentBinary, agentEnv, makeConfigHome, makeWorkspace, removeTempDirs } from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const MESSAGES = Number(opt("messages", 20000));
const RUNS = Number(opt("runs", 5));
const SESSION_ID = "ses_loadbench";
const METHOD = opt("method", "session/load"); // session/resume: the same without the replay
const bins = [];
argv.forEach((a, i) => {
  if (a !== "--bin") return;
  const v = argv[i + 1];
  const eq = v.indexOf("=");
  bins.push(eq > 0 ? { label: v.slice(0, eq), bin: path.resolve(v.slice(eq + 1)) } : { label: "bin", bin: path.resolve(v) });
});
if (!bins.length) bins.push({ label: "after", bin: agentBinary() });

// ---- the journal ----

const WORDS = ["the ", "session ", "store ", "writes ", "records ", "as ", "they ", "happen; ", "load ", "rebuilds ",
  "conversation ", "from ", "lines\n", "{\"json\": 1} ", "naïve ", "\ttab "];
function text(n, seed) {
  let s = "";
  for (let i = 0; s.length < n; i++) s += WORDS[(i * 7 + seed) % WORDS.length];
  return s.slice(0, n);
}

// varied: also the rarer records (plans, a compaction, a sub-agent, prompts with a resource link
// and older ones without ids or prompt blocks, a corrupt line, a call left running at the end),
// for comparing the replays of two binaries.
function* journalLines(cwd, turns, varied = false) {
  let ms = Date.UTC(2026, 0, 2, 3, 4, 5);
  const t = () => new Date((ms += 37)).toISOString();
  const line = (o) => JSON.stringify(o) + "\n";
  yield line({ type: "header", t: t(), v: 1, id: SESSION_ID, cwd, agent: "build", mode: "default" });
  for (let k = 0; k < turns; k++) {
    const prompt = text(200, k);
    if (varied && k % 7 === 3) yield line({ type: "user", t: t(), message: { role: "user", text: prompt } });
    else if (varied && k % 5 === 1)
      yield line({ type: "user", t: t(), message: { role: "user", id: `msg_u${k}`, text: prompt },
        prompt: [{ type: "text", text: prompt }, { type: "resource_link", uri: `file://${cwd}/notes${k}.md`, name: `notes${k}.md` }] });
    else yield line({ type: "user", t: t(), message: { role: "user", id: `msg_u${k}`, text: prompt }, prompt: [{ type: "text", text: prompt }] });
    if (varied && k % 10 === 2) yield line({ type: "plan", t: t(), entries: [{ content: `step ${k}`, status: "in_progress" }, { content: "then", status: "pending" }] });
    if (varied && k === Math.floor(turns / 2)) {
      yield line({ type: "compaction", t: t(), summary: text(400, k), kept: 4 });
      yield line({ type: "subagent", t: t(), sessionId: `ses_child${k}`, title: "reviewer", description: "Check", cwd, toolCallId: `call_${k}`, cancellable: true, state: "running" });
      yield "{\"type\":\"user\",\"message\":\n";
    }
    if (varied && k === turns - 1) {  // the server died during this turn's tool call
      yield line({ type: "assistant", t: t(), message: { role: "assistant", id: `msg_a${k}`, text: "last", toolCalls: [{ id: `call_${k}`, name: "bash", arguments: "{}" }] } });
      yield line({ type: "tool_call", t: t(), toolCallId: `call_${k}`, title: "bash", name: "bash", kind: "execute", status: "pending", rawInput: {} });
      return;
    }
    const call = `call_${k}`;
    const file = `src/module/file${k % 50}.cpp`;
    const args = { path: file, offset: 120, limit: 200 };
    yield line({
      type: "assistant", t: t(),
      message: { role: "assistant", id: `msg_a${k}`, text: text(200, k + 2), reasoning: text(300, k + 1),
        toolCalls: [{ id: call, name: "read_file", arguments: JSON.stringify(args) }] },
    });
    yield line({ type: "usage", t: t(), inputTokens: 12000 + k * 50, outputTokens: 400 });
    yield line({ type: "tool_call", t: t(), toolCallId: call, title: `Read ${file}`, name: "read_file", kind: "read",
      status: "pending", locations: [{ path: `${cwd}/${file}`, line: 120 }], rawInput: args });
    const result = text(1500, k + 3);
    yield line({ type: "tool_call", t: t(), toolCallId: call, title: `Read ${file}`, status: "completed",
      rawOutput: { output: result }, content: [{ type: "content", content: { type: "text", text: result } }] });
    yield line({ type: "tool_result", t: t(), message: { role: "tool", text: result, toolCallId: call } });
    yield line({ type: "assistant", t: t(), message: { role: "assistant", id: `msg_f${k}`, text: text(600, k + 4) } });
    yield line({ type: "usage", t: t(), inputTokens: 12600 + k * 50, outputTokens: 300 });
    yield line({ type: "turn_end", t: t(), stopReason: "end_turn" });
  }
}

// A config/data home with the session in its store; `dir` given: there (kept), else a temp dir.
function prepare(dir, { varied = false } = {}) {
  let home, ws;
  if (dir) {
    const root = path.resolve(dir);
    home = { configDir: path.join(root, "config"), dataDir: path.join(root, "data"), cacheDir: path.join(root, "cache"), homeDir: path.join(root, "home") };
    for (const d of Object.values(home)) fs.mkdirSync(d, { recursive: true });
    home.env = {
      OPENVAALA_CONFIG_DIR: home.configDir, OPENVAALA_DATA_DIR: home.dataDir, OPENVAALA_CACHE_DIR: home.cacheDir, HOME: home.homeDir,
      XDG_CONFIG_HOME: path.join(home.homeDir, ".config"), XDG_DATA_HOME: path.join(home.homeDir, ".local", "share"),
      XDG_CACHE_HOME: path.join(home.homeDir, ".cache"),
    };
    ws = path.join(root, "ws");
    fs.mkdirSync(ws, { recursive: true });
  } else {
    home = makeConfigHome({ provider: null });
    ws = makeWorkspace({});
  }
  const sessions = path.join(home.dataDir, "sessions");
  fs.mkdirSync(sessions, { recursive: true, mode: 0o700 });
  const file = path.join(sessions, `${SESSION_ID}.jsonl`);
  const fd = fs.openSync(file, "w", 0o600);
  let chunk = "";
  for (const l of journalLines(ws, Math.ceil(MESSAGES / 4), varied)) {
    chunk += l;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = "";
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  return { env: home.env, ws, logBytes: fs.statSync(file).size };
}

// ---- one fresh process, one load ----

const UPDATE_PREFIX = Buffer.from('{"jsonrpc":"2.0","method":"session/update"');

// The process's user + system CPU time so far, in ms (all its threads).
function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const v = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return ((Number(v[11]) + Number(v[12])) * 1000) / CLK_TCK;
}
const CLK_TCK = 100;

function vmHWM(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

// keep: every replayed session/update line is kept (for --check); otherwise they are only counted.
// record: every line the agent wrote is kept, raw (for the floor).
async function once(bin, home, { keep = false, caps = {}, record = null } = {}) {
  const child = spawn(bin, ["acp"], { cwd: home.ws, env: agentEnv(home.env), stdio: ["pipe", "pipe", "ignore"] });
  const exited = new Promise((r) => child.once("exit", r));
  let pending = null; // { id, resolve, t }
  let updates = 0;
  let bytes = 0;
  const kept = [];
  let partial = [];
  const onLine = (buf) => {
    if (record) record.push(Buffer.from(buf));
    if (buf.length >= UPDATE_PREFIX.length && buf.compare(UPDATE_PREFIX, 0, UPDATE_PREFIX.length, 0, UPDATE_PREFIX.length) === 0) {
      updates++;
      if (keep) kept.push(buf.toString("utf8"));
      return;
    }
    const m = JSON.parse(buf.toString("utf8"));
    if (pending && m.id === pending.id) {
      const t = process.hrtime.bigint();
      const p = pending;
      pending = null;
      p.resolve({ m, t });
    }
  };
  child.stdout.on("data", (d) => {
    bytes += d.length;
    let start = 0;
    for (let nl; (nl = d.indexOf(10, start)) >= 0; start = nl + 1) {
      if (partial.length) {
        partial.push(d.subarray(start, nl));
        onLine(Buffer.concat(partial));
        partial = [];
      } else onLine(d.subarray(start, nl));
    }
    if (start < d.length) partial.push(Buffer.from(d.subarray(start)));
  });
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve) => {
      pending = { id: ++id, resolve };
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  const init = await request("initialize", { protocolVersion: 1, clientCapabilities: caps });
  if (!init.m.result) throw new Error(`initialize failed: ${JSON.stringify(init.m)}`);
  const rssBeforeMiB = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) / 1024;
  updates = 0;
  kept.length = 0;
  bytes = 0;
  const cpu0 = cpuMs(child.pid);
  const t0 = process.hrtime.bigint();
  const load = await request(METHOD, { sessionId: SESSION_ID, cwd: home.ws, mcpServers: [] });
  const loadMs = Number(load.t - t0) / 1e6;
  if (!load.m.result) throw new Error(`${METHOD} failed: ${JSON.stringify(load.m)}`);
  const cpu = cpuMs(child.pid) - cpu0;
  // What the agent still does after its answer (reading the conversation the next prompt needs)
  // counts too: the peak is read once it has used no CPU for 200 ms.
  for (let last = cpuMs(child.pid), idle = 0, waited = 0; idle < 200 && waited < 5000; waited += 50) {
    await new Promise((r) => setTimeout(r, 50));
    const now = cpuMs(child.pid);
    idle = now === last ? idle + 50 : 0;
    last = now;
  }
  const peakMiB = vmHWM(child.pid);
  const cpuIdle = cpuMs(child.pid) - cpu0;
  const replayed = updates;
  const outMiB = bytes / 1048576;
  child.stdin.end();
  await exited;
  return { loadMs, peakMiB, rssBeforeMiB, cpu, cpuIdle, outMiB, updates: replayed, kept: kept.slice(0, replayed) };
}

// The same load from the native client (see --native above).
const NATIVE = argv.includes("--native");
const nativeClient = path.join(path.dirname(agentBinary()), "bench", "session_load_client");
function onceNative(bin, home) {
  if (!fs.existsSync(nativeClient)) throw new Error(`--native needs ${nativeClient}: cmake --build build --target session_load_client`);
  const out = execFileSync(nativeClient, [bin, home.ws, SESSION_ID, METHOD], { env: agentEnv(home.env), encoding: "utf8" });
  return JSON.parse(out);
}

// The floor: records what `bin` writes for initialize and for the load, and returns a stand-in
// agent (a shell script) that writes those bytes back, read from files, at the same requests.
async function makeFloor(bin, home) {
  const lines = [];
  await once(bin, home, { record: lines });
  const isAnswer = (buf, id) => { try { return JSON.parse(buf.toString("utf8")).id === id; } catch { return false; } };
  const init = lines.findIndex((l) => isAnswer(l, 1));
  const load = lines.findIndex((l) => isAnswer(l, 2));
  if (init < 0 || load < init) throw new Error("floor: the recorded run has no initialize or load answer");
  const dir = fs.mkdtempSync(path.join(home.ws, ".floor-"));
  const join = (ls) => Buffer.concat(ls.flatMap((l) => [l, Buffer.from("\n")]));
  fs.writeFileSync(path.join(dir, "init.jsonl"), join(lines.slice(0, init + 1)));
  fs.writeFileSync(path.join(dir, "load.jsonl"), join(lines.slice(init + 1, load + 1)));
  const script = path.join(dir, "floor.sh");
  fs.writeFileSync(script, `#!/bin/sh\nread -r l; cat '${dir}/init.jsonl'\nread -r l; cat '${dir}/load.jsonl'\nread -r l\n`, { mode: 0o755 });
  return script;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs, d = 1) => `${median(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)})`;

if (argv.includes("--prepare")) {
  const dir = opt("prepare");
  const home = prepare(dir);
  console.log(`${path.resolve(dir)}: ${MESSAGES} messages, log ${(home.logBytes / 1048576).toFixed(1)} MiB`);
} else if (argv.includes("--once")) {
  const dir = opt("home");
  if (!dir) throw new Error("--once needs --home DIR (from --prepare)");
  const root = path.resolve(dir);
  const home = {
    ws: path.join(root, "ws"),
    env: {
      OPENVAALA_CONFIG_DIR: path.join(root, "config"), OPENVAALA_DATA_DIR: path.join(root, "data"), OPENVAALA_CACHE_DIR: path.join(root, "cache"),
      HOME: path.join(root, "home"), XDG_CONFIG_HOME: path.join(root, "home", ".config"),
      XDG_DATA_HOME: path.join(root, "home", ".local", "share"), XDG_CACHE_HOME: path.join(root, "home", ".cache"),
    },
  };
  const r = await once(bins[0].bin, home);
  console.log(`${METHOD} ${r.loadMs.toFixed(1)} ms, agent CPU ${r.cpu.toFixed(0)} ms (${r.cpuIdle.toFixed(0)} until idle), peak RSS ${r.peakMiB.toFixed(1)} MiB, ${r.updates} updates (${r.outMiB.toFixed(1)} MiB)`);
} else if (argv.includes("--check")) {
  const home = prepare(undefined, { varied: true });
  let same = true;
  // a client that shows nothing special, and one that shows sub-agents, notices and compactions
  for (const caps of [{}, { subagents: {}, session: { notices: {}, compaction: {} } }]) {
    console.log(`clientCapabilities ${JSON.stringify(caps)}:`);
    const runs = [];
    // available_commands_update is not part of the replay: it is posted at the reply and may
    // overtake it or not.
    const replayOnly = (r) => ({ ...r, kept: r.kept.filter((l) => !l.includes('"sessionUpdate":"available_commands_update"')) });
    for (const b of bins) runs.push(replayOnly({ ...b, ...(await once(b.bin, home, { keep: true, caps })) }));
    for (const r of runs.slice(1)) {
      const a = runs[0].kept, b = r.kept;
      const n = Math.max(a.length, b.length);
      let diff = -1;
      for (let i = 0; i < n && diff < 0; i++) if (a[i] !== b[i]) diff = i;
      if (diff >= 0) {
        same = false;
        console.log(`  ${runs[0].label} and ${r.label} differ at update ${diff} (of ${a.length} / ${b.length}):`);
        console.log(`    ${runs[0].label}: ${(a[diff] ?? "(none)").slice(0, 400)}`);
        console.log(`    ${r.label}: ${(b[diff] ?? "(none)").slice(0, 400)}`);
      } else console.log(`  ${runs[0].label} and ${r.label}: the same ${a.length} updates, byte for byte`);
    }
  }
  removeTempDirs();
  process.exit(same ? 0 : 1);
} else {
  const home = prepare();
  console.log(`${MESSAGES} messages (${Math.ceil(MESSAGES / 4)} turns), log ${(home.logBytes / 1048576).toFixed(1)} MiB; ${RUNS} runs each, binaries in turn; ${NATIVE ? "native client (pipes)" : "Node client"}; medians (min–max)`);
  if (argv.includes("--floor")) bins.push({ label: "floor (the recorded bytes, from a file)", bin: await makeFloor(bins[0].bin, home) });
  const results = new Map(bins.map((b) => [b.label, []]));
  for (let r = 0; r < RUNS; r++) for (const b of bins) results.get(b.label).push(NATIVE ? onceNative(b.bin, home) : await once(b.bin, home));
  removeTempDirs();
  console.log(`| binary | ${METHOD} ms | agent CPU ms (user + sys) until the answer | … until idle | peak RSS MiB (until idle) | RSS after initialize MiB | updates (MiB) |`);
  console.log("|---|---|---|---|---|---|---|");
  for (const [label, rs] of results)
    console.log(`| ${label} | ${fmt(rs.map((x) => x.loadMs))} | ${fmt(rs.map((x) => x.cpu), 0)} | ${fmt(rs.map((x) => x.cpuIdle), 0)} | ${fmt(rs.map((x) => x.peakMiB))} | ${fmt(rs.map((x) => x.rssBeforeMiB))} | ${median(rs.map((x) => x.updates))} (${median(rs.map((x) => x.outMiB)).toFixed(1)}) |`);
}
