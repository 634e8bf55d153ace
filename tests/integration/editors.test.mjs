// Editor integration files: the Zed extension manifest, the ACP Registry entry and the VS Code
// extension manifest are parsed and every file they reference must exist; every launch config in
// docs/editors.md is run as documented (command + args parsed out of the doc) through the ACP SDK
// client: initialize, session/new, a text prompt against the fake model.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { REPO_ROOT, scenario, agentBinary } from "./harness.mjs";

const EXT = path.join(REPO_ROOT, "editor-extensions");
const PLATFORMS = ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"];

// ------------------------------------------------------------------------------------------
// a tiny TOML reader: enough for extension.toml (tables, dotted table names, strings, integers,
// booleans, arrays of strings/numbers, inline tables of strings, comments)
// ------------------------------------------------------------------------------------------
export function parseToml(text) {
  const root = {};
  let cur = root;
  const lines = text.split(/\r?\n/);
  const parseValue = (s, lineNo) => {
    s = s.trim();
    if (s.startsWith('"')) {
      const m = /^"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$/.exec(s);
      if (!m) throw new Error(`line ${lineNo}: bad string ${s}`);
      return JSON.parse(`"${m[1]}"`);
    }
    if (s.startsWith("'")) {
      const m = /^'([^']*)'\s*(?:#.*)?$/.exec(s);
      if (!m) throw new Error(`line ${lineNo}: bad literal string ${s}`);
      return m[1];
    }
    if (s.startsWith("[")) {
      const body = s.replace(/\s*(#.*)?$/, "");
      if (!body.endsWith("]")) throw new Error(`line ${lineNo}: multi-line arrays are not supported`);
      const inner = body.slice(1, -1).trim();
      if (!inner) return [];
      const items = inner.match(/"(?:[^"\\]|\\.)*"|'[^']*'|[^,\s]+/g) ?? [];
      return items.map((x) => parseValue(x, lineNo));
    }
    if (s.startsWith("{")) {
      const inner = s.replace(/\s*(#.*)?$/, "").slice(1, -1).trim();
      const o = {};
      if (inner) for (const part of inner.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
        const [k, ...v] = part.split("=");
        o[k.trim().replace(/^"|"$/g, "")] = parseValue(v.join("="), lineNo);
      }
      return o;
    }
    const bare = s.replace(/\s*#.*$/, "");
    if (bare === "true" || bare === "false") return bare === "true";
    if (/^[+-]?\d+$/.test(bare)) return Number(bare);
    throw new Error(`line ${lineNo}: unsupported value ${s}`);
  };
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const t = /^\[([^\]]+)\]\s*(?:#.*)?$/.exec(line);
    if (t) {
      cur = root;
      for (const k of t[1].split(".").map((x) => x.trim().replace(/^"|"$/g, ""))) {
        cur[k] ??= {};
        cur = cur[k];
      }
      return;
    }
    const kv = /^("?[A-Za-z0-9_.-]+"?)\s*=\s*(.+)$/.exec(line);
    if (!kv) throw new Error(`line ${i + 1}: cannot parse: ${line}`);
    const key = kv[1].replace(/^"|"$/g, "");
    if (Object.hasOwn(cur, key)) throw new Error(`line ${i + 1}: duplicate key ${key}`);
    cur[key] = parseValue(kv[2], i + 1);
  });
  return root;
}

function archiveRe(version, platform) {
  return new RegExp(`^https://github\\.com/openvaala/openvaala/releases/download/v${version.replace(/\./g, "\\.")}/openvaala-${version.replace(/\./g, "\\.")}-${platform}\\.tar\\.gz$`);
}

test("tiny TOML reader agrees with smol-toml when available", async () => {
  const text = fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8");
  const mine = parseToml(text);
  const smol = path.join(EXT, "vscode", "node_modules", "smol-toml", "dist", "index.js");
  if (!fs.existsSync(smol)) return;
  const { parse } = await import(smol);
  assert.deepEqual(mine, JSON.parse(JSON.stringify(parse(text))));
});

test("Zed extension.toml: required keys, six targets with release archives, cmd, args acp, files exist", () => {
  const dir = path.join(EXT, "zed");
  const m = parseToml(fs.readFileSync(path.join(dir, "extension.toml"), "utf8"));
  for (const k of ["id", "name", "version", "schema_version", "authors", "description", "repository"]) assert.ok(m[k] !== undefined, `missing ${k}`);
  assert.equal(m.schema_version, 1);
  assert.match(m.version, /^\d+\.\d+\.\d+$/);
  const a = m.agent_servers?.openvaala;
  assert.ok(a, "[agent_servers.openvaala]");
  assert.equal(a.name, "OpenVaala");
  assert.ok(fs.existsSync(path.join(dir, a.icon)), `icon ${a.icon} exists`);
  const svg = fs.readFileSync(path.join(dir, a.icon), "utf8");
  assert.match(svg, /<svg[\s>]/);
  assert.doesNotMatch(svg, /(fill|stroke)="(?!currentColor|none)[^"]+"/, "monochrome icon (currentColor)");
  assert.deepEqual(Object.keys(a.targets).sort(), [...PLATFORMS].sort());
  for (const [platform, t] of Object.entries(a.targets)) {
    assert.match(t.archive, archiveRe(m.version, platform), platform);
    assert.equal(t.cmd, platform.startsWith("windows") ? "./bin/openvaala.exe" : "./bin/openvaala");
    assert.deepEqual(t.args, ["acp"]);
    if (t.sha256 !== undefined) assert.match(t.sha256, /^[0-9a-f]{64}$/);
  }
  const readme = fs.readFileSync(path.join(dir, "README.md"), "utf8");
  const block = /```json\n([\s\S]*?)```/.exec(readme);
  const settings = JSON.parse(block[1]);
  assert.equal(settings.agent_servers.OpenVaala.type, "custom");
  assert.deepEqual(settings.agent_servers.OpenVaala.args, ["acp"]);
});

test("ACP Registry agent.json: schema fields, binary per platform matching the Zed targets, icon", () => {
  const dir = path.join(EXT, "registry");
  const a = JSON.parse(fs.readFileSync(path.join(dir, "agent.json"), "utf8"));
  for (const k of ["id", "name", "version", "description", "distribution"]) assert.ok(a[k], `missing ${k}`);
  assert.match(a.id, /^[a-z][a-z0-9-]*$/);
  assert.match(a.version, /^\d+\.\d+\.\d+/);
  const allowedTop = ["id", "name", "version", "description", "repository", "website", "authors", "license", "license_url", "icon", "distribution"];
  for (const k of Object.keys(a)) assert.ok(allowedTop.includes(k), `unknown key ${k}`);
  assert.deepEqual(Object.keys(a.distribution), ["binary"]);
  const zed = parseToml(fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8"));
  assert.equal(a.version, zed.version, "same version as the Zed extension");
  assert.deepEqual(Object.keys(a.distribution.binary).sort(), [...PLATFORMS].sort());
  for (const [platform, t] of Object.entries(a.distribution.binary)) {
    for (const k of Object.keys(t)) assert.ok(["archive", "sha256", "cmd", "args", "env"].includes(k), `${platform}: unknown key ${k}`);
    assert.match(t.archive, archiveRe(a.version, platform));
    assert.equal(t.archive, zed.agent_servers.openvaala.targets[platform].archive);
    assert.equal(t.cmd, zed.agent_servers.openvaala.targets[platform].cmd);
    assert.deepEqual(t.args, ["acp"]);
    if (t.sha256 !== undefined) assert.match(t.sha256, /^[a-fA-F0-9]{64}$/);
  }
  const svg = fs.readFileSync(path.join(dir, "icon.svg"), "utf8");
  assert.doesNotMatch(svg, /(fill|stroke)="(?!currentColor|none)[^"]+"/);
});

test("VS Code package.json: entry point source, contributed views/commands and their icons exist", () => {
  const dir = path.join(EXT, "vscode");
  const p = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  assert.equal(p.main, "./dist/extension.cjs");
  assert.ok(fs.existsSync(path.join(dir, "src", "vscode", "extension.ts")));
  assert.ok(fs.existsSync(path.join(dir, "esbuild.mjs")));
  assert.ok(p.scripts.test && p.scripts.package && p.scripts.typecheck);
  for (const c of p.contributes.viewsContainers.activitybar) assert.ok(fs.existsSync(path.join(dir, c.icon)), c.icon);
  for (const v of p.contributes.views.openvaala) assert.ok(!v.icon || fs.existsSync(path.join(dir, v.icon)));
  assert.ok(fs.existsSync(path.join(dir, "media", "chat.css")));
  assert.ok(p.engines.vscode);
  assert.equal(p.dependencies["@agentclientprotocol/sdk"].replace(/^\^/, "").split(".")[0], "2");
});

// ------------------------------------------------------------------------------------------
// docs/editors.md: every launch config, as documented
// ------------------------------------------------------------------------------------------

/** [{ editor, command, args }] parsed out of the doc's snippets. */
export function launchConfigs(doc) {
  const sections = doc.split(/\n## /).slice(1);
  const out = [];
  for (const s of sections) {
    const title = s.split("\n")[0].trim();
    for (const m of s.matchAll(/```(\w+)\n([\s\S]*?)```/g)) {
      const [, lang, body] = m;
      if (lang === "json") {
        const j = JSON.parse(body);
        for (const [name, cfg] of Object.entries(j.agent_servers ?? {})) out.push({ editor: `${title} (${name})`, command: cfg.command, args: cfg.args ?? [], env: cfg.env ?? {} });
      } else if (lang === "lua") {
        const cc = /default\s*=\s*\{([^}]*)\}/.exec(body);
        if (cc) {
          const parts = [...cc[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]);
          out.push({ editor: title, command: parts[0], args: parts.slice(1), env: {} });
          continue;
        }
        const cmd = /command\s*=\s*"([^"]+)"/.exec(body);
        const args = /args\s*=\s*\{([^}]*)\}/.exec(body);
        if (cmd) out.push({ editor: title, command: cmd[1], args: args ? [...args[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]) : [], env: {} });
      } else if (lang === "elisp") {
        const cmd = /:command\s+"([^"]+)"/.exec(body);
        const params = /:command-params\s+'\(([^)]*)\)/.exec(body);
        if (cmd) out.push({ editor: title, command: cmd[1], args: params ? [...params[1].matchAll(/"([^"]*)"/g)].map((x) => x[1]) : [], env: {} });
      }
    }
  }
  return out;
}

const DOC = fs.readFileSync(path.join(REPO_ROOT, "docs", "editors.md"), "utf8");
const CONFIGS = launchConfigs(DOC);

test("docs/editors.md documents a launch config for each editor", () => {
  const editors = CONFIGS.map((c) => c.editor).join(" | ");
  for (const e of ["Zed", "JetBrains", "CodeCompanion", "avante", "agent-shell"]) assert.match(editors, new RegExp(e), `${e} in ${editors}`);
  for (const c of CONFIGS) {
    assert.equal(path.basename(c.command), "openvaala", `${c.editor}: command`);
    assert.deepEqual(c.args, ["acp"], `${c.editor}: args`);
  }
});

for (const cfg of CONFIGS) {
  scenario(`documented launch config runs: ${cfg.editor}: ${cfg.command} ${cfg.args.join(" ")}`, async (ctx) => {
    const fake = await ctx.fakeModel([{ text: `Hello from ${cfg.editor}.` }]);
    const ws = ctx.workspace({ "README.md": "# project\n" });
    const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
    // the doc's command is `openvaala` on PATH: resolve it the way the editor would, with the
    // build directory first on PATH
    const binDir = path.dirname(agentBinary());
    const PATH = `${binDir}${path.delimiter}${process.env.PATH ?? ""}`;
    const resolved = path.isAbsolute(cfg.command) ? cfg.command : path.join(binDir, cfg.command);
    assert.ok(fs.existsSync(resolved), `${cfg.command} resolves on PATH=${binDir}:…`);
    const h = await ctx.agent({ bin: resolved, args: cfg.args, cwd: ws, env: { ...home.env, ...cfg.env, PATH } });
    const init = await h.initialize();
    assert.equal(init.protocolVersion, 1);
    const { sessionId } = await h.newSession(ws);
    const r = await h.prompt(sessionId, "hi");
    assert.equal(r.stopReason, "end_turn");
    assert.match(h.textOf(sessionId), new RegExp(`Hello from ${cfg.editor.replace(/[()]/g, ".")}`));
    h.assertSchemaClean();
  });
}

// ------------------------------------------------------------------------------------------
// scripts/release.sh: the host platform's archive (manifests left alone)
// ------------------------------------------------------------------------------------------
import { execFileSync } from "node:child_process";
import os from "node:os";
import crypto from "node:crypto";
import { agentBinaryExists } from "./harness.mjs";

test("release.sh builds openvaala-<version>-<os>-<arch>.tar.gz with bin/openvaala, the skill and docs", { skip: !agentBinaryExists() && "binary not built", timeout: 120000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "ov-rel-"));
  try {
    const before = fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8");
    const archive = execFileSync("sh", [path.join(REPO_ROOT, "scripts", "release.sh"), "--no-manifests", "--out", out, "--build-dir", path.dirname(agentBinary())], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").pop();
    const version = parseToml(before).version;
    const osName = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform];
    const arch = { x64: "x86_64", arm64: "aarch64" }[process.arch];
    assert.equal(path.basename(archive), `openvaala-${version}-${osName}-${arch}.tar.gz`);
    const list = execFileSync("tar", ["tzf", archive], { encoding: "utf8" }).split("\n");
    assert.ok(list.includes("./bin/openvaala"), list.join(" "));
    assert.ok(list.some((l) => l.endsWith("SKILL.md")), "the built-in skill");
    assert.ok(list.includes("./share/doc/openvaala/docs/editors.md"));
    const sha = crypto.createHash("sha256").update(fs.readFileSync(archive)).digest("hex");
    assert.equal(fs.readFileSync(`${archive}.sha256`, "utf8").split(/\s+/)[0], sha);
    const x = path.join(out, "x");
    fs.mkdirSync(x);
    execFileSync("tar", ["xzf", archive, "-C", x]);
    assert.match(execFileSync(path.join(x, "bin", "openvaala"), ["--version"], { encoding: "utf8" }), new RegExp(version.replace(/\./g, "\\.")));
    assert.equal(fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8"), before, "--no-manifests leaves the manifests alone");
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
