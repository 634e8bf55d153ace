#!/usr/bin/env node
// The README's "main job", end to end and offline:
//   a fake LLM (real OpenAI / Anthropic streaming wire format) scripted to read a file, patch it,
//   run a command and answer; a copy of examples/workspace/; `build/openvaala acp` driven by the
//   official ACP SDK client with fs + terminal capabilities and auto-allowed permissions.
// Prints a readable transcript and the edited file; exits non-zero if anything goes wrong.
//
//   node scripts/demo.mjs [--bin build/openvaala] [--provider openai|anthropic] [--keep]

import fs from "node:fs";
import path from "node:path";
import {
  REPO_ROOT,
  agentBinary,
  startAgent,
  startFakeModel,
  makeConfigHome,
  makeWorkspace,
  copyTree,
  withTimeout,
} from "../tests/integration/harness.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
if (argv.includes("--help") || argv.includes("-h")) {
  console.log("usage: node scripts/demo.mjs [--bin build/openvaala] [--provider openai|anthropic] [--keep]");
  process.exit(0);
}
const bin = path.resolve(REPO_ROOT, opt("--bin", agentBinary()));
const provider = opt("--provider", "openai");
if (argv.includes("--keep")) process.env.OPENVAALA_KEEP_TMP = "1";

const FILE = "src/greeting.txt";
const SCRIPT = [
  {
    reasoning: "The user says the greeting has a typo. Read it first.",
    text: "Let me look at the greeting.",
    toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: FILE } }],
  },
  {
    text: "There is a typo: \"wrld\". Fixing it.",
    toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: {
      patch: `*** Begin Patch\n*** Update File: ${FILE}\n@@\n-Hello, wrld!\n+Hello, world!\n*** End Patch`,
    } }],
  },
  {
    text: "Checking the result.",
    toolCalls: [{ id: "call_bash", name: "bash", arguments: { command: `cat ${FILE} && wc -l README.md` } }],
  },
  { text: "Fixed the typo in `src/greeting.txt`; it now reads \"Hello, world!\"." },
];

const c = process.stdout.isTTY
  ? { dim: (s) => `\x1b[2m${s}\x1b[0m`, bold: (s) => `\x1b[1m${s}\x1b[0m`, green: (s) => `\x1b[32m${s}\x1b[0m`, red: (s) => `\x1b[31m${s}\x1b[0m`, cyan: (s) => `\x1b[36m${s}\x1b[0m`, yellow: (s) => `\x1b[33m${s}\x1b[0m` }
  : Object.fromEntries(["dim", "bold", "green", "red", "cyan", "yellow"].map((k) => [k, (s) => s]));

let streaming = null; // "message" | "thought" | null
const out = (s) => process.stdout.write(s);
function endStream() {
  if (streaming) out("\n");
  streaming = null;
}
function line(s) {
  endStream();
  out(s + "\n");
}

const toolTitles = new Map();
let h = null;

function printDiff(d) {
  line(c.bold(`    diff ${d.path}`));
  for (const l of (d.oldText ?? "").replace(/\n$/, "").split("\n")) if (d.oldText) line(c.red(`    - ${l}`));
  for (const l of (d.newText ?? "").replace(/\n$/, "").split("\n")) line(c.green(`    + ${l}`));
}

function onUpdate({ update: u }) {
  switch (u.sessionUpdate) {
    case "agent_message_chunk":
      if (streaming !== "message") { endStream(); out(c.bold("agent: ")); streaming = "message"; }
      if (u.content?.type === "text") out(u.content.text);
      break;
    case "agent_thought_chunk":
      if (streaming !== "thought") { endStream(); out(c.dim("thinking: ")); streaming = "thought"; }
      if (u.content?.type === "text") out(c.dim(u.content.text));
      break;
    case "tool_call":
      toolTitles.set(u.toolCallId, u.title);
      line(c.cyan(`[tool] ${u.kind ?? "other"} "${u.title}" (${u.status ?? "pending"})`) +
        (u.locations?.length ? c.dim(`  ${u.locations.map((l) => l.path).join(", ")}`) : ""));
      for (const x of u.content ?? []) if (x.type === "diff") printDiff(x);
      break;
    case "tool_call_update": {
      const title = u.title ?? toolTitles.get(u.toolCallId) ?? u.toolCallId;
      if (u.status) line(c.cyan(`[tool] "${title}" -> ${u.status}`));
      for (const x of u.content ?? []) {
        if (x.type === "diff") printDiff(x);
        else if (x.type === "terminal") {
          const t = h?.terminals.get(x.terminalId);
          if (t && !t.running) {
            line(c.bold(`    terminal ${x.terminalId} (${t.command} ${t.args.map((a) => JSON.stringify(a)).join(" ")}), exit ${t.exitStatus?.exitCode}:`));
            for (const l of t.output.replace(/\n$/, "").split("\n")) line(`    | ${l}`);
          } else line(c.dim(`    terminal ${x.terminalId}`));
        } else if (x.type === "content" && x.content?.type === "text" && u.status === "failed") {
          line(c.red(`    ${x.content.text}`));
        }
      }
      break;
    }
    case "plan":
      line(c.yellow(`[plan] ${(u.entries ?? []).map((e) => `${e.status === "completed" ? "x" : " "} ${e.content}`).join(" | ")}`));
      break;
    case "current_mode_update":
      line(c.dim(`[mode] ${u.currentModeId}`));
      break;
    default:
      break; // usage_update, available_commands_update, ... are not part of the transcript
  }
}

async function main() {
  if (!fs.existsSync(bin)) throw new Error(`${bin} does not exist: build it first (cmake -S . -B build && cmake --build build)`);
  const fake = await startFakeModel({ script: SCRIPT });
  const ws = makeWorkspace();
  copyTree(path.join(REPO_ROOT, "examples", "workspace"), ws);
  const home = makeConfigHome({ provider, modelUrl: fake.url });
  line(c.dim(`workspace ${ws}\nfake ${provider} model at ${fake.url}\nagent ${bin} acp`));
  try {
    h = await startAgent({
      bin,
      env: home.env,
      cwd: ws,
      onUpdate,
      onPermission: (params) => {
        const opts = params.options.map((o) => `${o.name} [${o.kind}]`).join(", ");
        line(c.yellow(`[permission] ${params.toolCall?.title ?? toolTitles.get(params.toolCall?.toolCallId) ?? "tool call"}: ${opts} -> allow_once`));
        return "allow_once";
      },
    });
    const init = await h.initialize();
    line(c.dim(`connected to ${init.agentInfo?.name} ${init.agentInfo?.version ?? ""} (ACP v${init.protocolVersion})`));
    const { sessionId } = await h.newSession(ws);
    const promptText = `The greeting in ${FILE} has a typo. Fix it and show me the file.`;
    line(c.bold("you: ") + promptText);
    const res = await withTimeout(h.prompt(sessionId, promptText, { timeout: 60000 }), 60000, "prompt");
    line(c.bold(`[stop] ${res.stopReason}`));
    const content = fs.readFileSync(path.join(ws, FILE), "utf8");
    line(c.bold(`\n${FILE} now contains:`));
    out(content);

    const problems = [];
    if (res.stopReason !== "end_turn") problems.push(`stop reason ${res.stopReason}, expected end_turn`);
    if (content !== "Hello, world!\n") problems.push(`${FILE} is ${JSON.stringify(content)}, expected "Hello, world!\\n"`);
    if (fake.requests.length !== SCRIPT.length) problems.push(`${fake.requests.length} model requests, expected ${SCRIPT.length}`);
    if (h.schemaErrors.length) problems.push(`ACP schema violations:\n  ${h.schemaErrors.join("\n  ")}`);
    if (problems.length) {
      line(c.red(`\ndemo FAILED:\n- ${problems.join("\n- ")}`));
      if (h.stderr) line(c.dim(`agent stderr (tail):\n${h.stderr.slice(-3000)}`));
      process.exitCode = 1;
    } else {
      line(c.green("\ndemo OK"));
    }
  } finally {
    if (h) await h.close();
    await fake.close();
  }
}

main().catch((e) => {
  endStream();
  console.error(c.red(`demo FAILED: ${e?.message ?? e}`));
  if (h?.stderr) console.error(c.dim(`agent stderr (tail):\n${h.stderr.slice(-3000)}`));
  process.exit(1);
});
