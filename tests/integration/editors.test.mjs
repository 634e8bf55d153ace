// Editor integration files: the Zed extension manifest, the ACP Registry entry and the VS Code
// extension manifest are parsed and every file they reference must exist; every launch config in
// docs/editors.md is run as documented (command + args parsed out of the doc) through the ACP SDK
// client: initialize, session/new, a text prompt against the fake model.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { REPO_ROOT, scenario, agentBinary } from "./harness.mjs";

const EXT = path.join(REPO_ROOT, "editor-extensions");
// What the release really builds (scripts/release.sh, scripts/build-aarch64.sh): the code is
// Linux-only (docs/PORTING.md), so no macOS or Windows archive may be listed.
const PLATFORMS = ["linux-aarch64", "linux-x86_64"];

// The ACP Registry's own schema, vendored from agentclientprotocol/registry (see its SOURCE.md).
const REGISTRY_SCHEMA = path.join(REPO_ROOT, "tests", "fixtures", "acp-registry", "agent.schema.json");
function registrySchemaValidator() {
  const require = createRequire(import.meta.url);
  const Ajv = require("ajv").default; // draft-07, as the schema declares
  const addFormats = require("ajv-formats").default ?? require("ajv-formats");
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv, ["uri"]);
  const validate = ajv.compile(JSON.parse(fs.readFileSync(REGISTRY_SCHEMA, "utf8")));
  return (entry) => (validate(entry) ? [] : validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}${e.params?.additionalProperty ? ` (${e.params.additionalProperty})` : ""}`));
}

/** The checks of the registry's build (build_registry.py) beyond its schema, offline. */
function registryBuildProblems(a, dir) {
  const problems = [];
  if (a.id !== "openvaala") problems.push(`id ${a.id}: the entry is submitted as openvaala/ and the id must equal the folder name`);
  for (const [platform, t] of Object.entries(a.distribution?.binary ?? {})) {
    const m = /\/(?:download|releases)\/v?([\d.]+)\//.exec(t.archive ?? "");
    if (m && m[1] !== a.version) problems.push(`${platform}: archive URL has version ${m[1]}, entry has ${a.version}`);
    if (/\.(dmg|pkg|deb|rpm|msi|appimage)$/i.test(t.archive ?? "")) problems.push(`${platform}: installer formats are rejected`);
  }
  const svg = fs.readFileSync(path.join(dir, "icon.svg"), "utf8");
  const w = /<svg[^>]*\swidth=["'](\d+)/.exec(svg)?.[1];
  const h = /<svg[^>]*\sheight=["'](\d+)/.exec(svg)?.[1];
  if (w !== "16" || h !== "16") problems.push(`icon.svg must be 16x16 (got ${w}x${h})`);
  if (!/currentColor/i.test(svg)) problems.push("icon.svg must use currentColor");
  if (/(fill|stroke)="(?!currentColor|none|inherit)[^"]+"/i.test(svg)) problems.push("icon.svg has a hardcoded colour");
  return problems;
}

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

test("Zed extension.toml: required keys, the Linux targets the release builds (no macOS/Windows), cmd, args acp, files exist, LICENSE", () => {
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
  assert.deepEqual(Object.keys(a.targets).sort(), [...PLATFORMS].sort(), "extension.toml lists exactly the archives the release builds");
  for (const [platform, t] of Object.entries(a.targets)) {
    assert.match(t.archive, archiveRe(m.version, platform), platform);
    assert.equal(t.cmd, "./bin/openvaala");
    assert.deepEqual(t.args, ["acp"]);
    if (t.sha256 !== undefined) assert.match(t.sha256, /^[0-9a-f]{64}$/);
  }
  const readme = fs.readFileSync(path.join(dir, "README.md"), "utf8");
  const block = /```json\n([\s\S]*?)```/.exec(readme);
  const settings = JSON.parse(block[1]);
  assert.equal(settings.agent_servers.OpenVaala.type, "custom");
  assert.deepEqual(settings.agent_servers.OpenVaala.args, ["acp"]);
  // Zed's extension CI: a LICENSE* file at the extension's root with an accepted licence.
  const lic = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  assert.ok(lic, "editor-extensions/zed/ has the LICENSE file Zed's extension CI requires");
  assert.match(fs.readFileSync(path.join(dir, lic), "utf8"), /^MIT License\n[\s\S]*Permission is hereby granted, free of charge/, "the LICENSE is the MIT text (accepted by Zed)");
  // The registry is the first way in (Zed no longer accepts new agent-server extensions).
  const firstSection = readme.split(/\n## /)[1] ?? "";
  assert.match(firstSection, /ACP Registry/, "the Zed README's first section is the ACP Registry");
});

test("ACP Registry agent.json: valid against the registry's own schema and build checks; only the Linux archives the release builds", () => {
  const dir = path.join(EXT, "registry");
  const a = JSON.parse(fs.readFileSync(path.join(dir, "agent.json"), "utf8"));
  assert.deepEqual(registrySchemaValidator()(a), [], "agent.json passes the ACP Registry's agent.schema.json");
  assert.deepEqual(registryBuildProblems(a, dir), [], "agent.json passes the registry build's other checks");
  const zed = parseToml(fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8"));
  assert.equal(a.version, zed.version, "same version as the Zed extension");
  assert.deepEqual(Object.keys(a.distribution.binary).sort(), [...PLATFORMS].sort(), "agent.json lists exactly the archives the release builds");
  for (const [platform, t] of Object.entries(a.distribution.binary)) {
    assert.match(t.archive, archiveRe(a.version, platform));
    assert.equal(t.archive, zed.agent_servers.openvaala.targets[platform].archive);
    assert.equal(t.cmd, zed.agent_servers.openvaala.targets[platform].cmd);
    assert.deepEqual(t.args, ["acp"]);
  }
});

test("the vendored registry schema is the real one: it rejects what the registry rejects", () => {
  const validate = registrySchemaValidator();
  const a = JSON.parse(fs.readFileSync(path.join(EXT, "registry", "agent.json"), "utf8"));
  const t = Object.values(a.distribution.binary)[0];
  const bad = (mut) => { const c = structuredClone(a); mut(c, Object.values(c.distribution.binary)[0]); return validate(c); };
  assert.notDeepEqual(bad((c, x) => { x.checksum = "ab"; }), [], "an unknown key in a binary target is refused");
  assert.notDeepEqual(bad((c, x) => { x.sha256 = "not-hex"; }), [], "a sha256 that is not 64 hex digits is refused");
  assert.notDeepEqual(bad((c) => { c.distribution.binary["freebsd-x86_64"] = { ...t }; }), [], "an unknown platform is refused");
  assert.notDeepEqual(bad((c) => { delete c.name; }), [], "a missing name is refused");
  assert.deepEqual(bad((c, x) => { x.sha256 = "a".repeat(64); }), [], "a 64-hex sha256 is accepted");
  // The registry's current schema (August 2026) also takes a website and a license URL.
  assert.deepEqual(bad((c) => { c.website = "https://example.org/openvaala"; c.license_url = "https://example.org/license"; }), [],
    "website and license_url are accepted (the vendored schema is the current one)");
  assert.notDeepEqual(bad((c) => { c.license_url = "not a url"; }), [], "a license_url that is not a URI is refused");
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

test("release.sh builds openvaala-<version>-linux-<arch>.tar.gz with bin/openvaala, the skill and docs", { skip: !agentBinaryExists() && "binary not built", timeout: 120000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "ov-rel-"));
  try {
    const before = fs.readFileSync(path.join(EXT, "zed", "extension.toml"), "utf8");
    const archive = execFileSync("sh", [path.join(REPO_ROOT, "scripts", "release.sh"), "--no-manifests", "--out", out, "--build-dir", path.dirname(agentBinary())], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").pop();
    const version = parseToml(before).version;
    const arch = { x64: "x86_64", arm64: "aarch64" }[process.arch];
    assert.equal(path.basename(archive), `openvaala-${version}-linux-${arch}.tar.gz`);
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

test("release.sh writes the archive's sha256 into a copy of the manifests, and the agent.json it writes passes the registry's schema", { skip: !agentBinaryExists() && "binary not built", timeout: 120000 }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ov-rel-m-"));
  try {
    for (const f of ["zed/extension.toml", "registry/agent.json"]) {
      fs.mkdirSync(path.join(tmp, "editor-extensions", path.dirname(f)), { recursive: true });
      fs.copyFileSync(path.join(EXT, f), path.join(tmp, "editor-extensions", f));
    }
    const before = fs.readFileSync(path.join(EXT, "registry", "agent.json"), "utf8");
    const archive = execFileSync("sh", [path.join(REPO_ROOT, "scripts", "release.sh"), "--manifests-in", tmp, "--out", path.join(tmp, "out"), "--build-dir", path.dirname(agentBinary())], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").pop();
    const sha = crypto.createHash("sha256").update(fs.readFileSync(archive)).digest("hex");
    const target = `linux-${{ x64: "x86_64", arm64: "aarch64" }[process.arch]}`;
    const a = JSON.parse(fs.readFileSync(path.join(tmp, "editor-extensions", "registry", "agent.json"), "utf8"));
    assert.deepEqual(registrySchemaValidator()(a), [], "the agent.json release.sh writes passes the ACP Registry's schema");
    assert.equal(a.distribution.binary[target].sha256, sha, "agent.json records the archive's sha256");
    assert.deepEqual(Object.keys(a.distribution.binary).sort(), [...PLATFORMS].sort());
    const zed = parseToml(fs.readFileSync(path.join(tmp, "editor-extensions", "zed", "extension.toml"), "utf8"));
    assert.equal(zed.agent_servers.openvaala.targets[target].sha256, sha, "extension.toml records the archive's sha256");
    assert.equal(fs.readFileSync(path.join(EXT, "registry", "agent.json"), "utf8"), before, "--manifests-in leaves the repository's manifests alone");
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------------------------
// docs/editors.md: the registry first; CodeCompanion connects as its current source does
// ------------------------------------------------------------------------------------------

test("docs/editors.md: the ACP Registry is the first way in, for the doc and for Zed", () => {
  const sections = DOC.split(/\n## /).slice(1).map((x) => x.split("\n")[0]);
  assert.match(sections[0], /ACP Registry/, `first section is the registry (sections: ${sections.join(" | ")})`);
  const zed = DOC.split(/\n## /).find((x) => x.startsWith("Zed"));
  assert.ok(zed.indexOf("Registry") >= 0 && zed.indexOf("Registry") < zed.indexOf("```"), "the Zed section names the registry before the settings snippet");
  assert.match(zed, /"type": "custom"/, "the Zed settings snippet is a custom agent server");
});

// What CodeCompanion's ACP adapters bring when extended (olimorris/codecompanion.nvim at
// f1afd02537c68b3dd6e0d41d4adda5ef538e0473, lua/codecompanion/adapters/acp/*.lua): the
// inherited defaults.auth_method, and whether the adapter answers auth itself (handlers.auth).
const CODECOMPANION_ACP_BASES = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "editors", "codecompanion-acp-adapters.json"), "utf8")).adapters;

/** The CodeCompanion snippet's adapter as the plugin resolves it (extend = deep merge). */
function codeCompanionAdapter(doc) {
  const sec = doc.split(/\n## /).find((x) => x.startsWith("Neovim: CodeCompanion"));
  const lua = /```lua\n([\s\S]*?)```/.exec(sec)[1];
  const base = /adapters"\)\.extend\("([a-z_]+)"/.exec(lua)?.[1];
  const own = /auth_method\s*=\s*"([^"]+)"/.exec(lua)?.[1];
  const overridesAuthHandler = /handlers\s*=\s*\{[\s\S]*\bauth\s*=/.test(lua);
  return { lua, base, authMethod: own ?? CODECOMPANION_ACP_BASES[base]?.auth_method ?? null, authHandler: !overridesAuthHandler && !!CODECOMPANION_ACP_BASES[base]?.auth_handler };
}

test("docs/editors.md CodeCompanion: current `interactions` key, a known base adapter", () => {
  const cc = codeCompanionAdapter(DOC);
  assert.ok(cc.base && CODECOMPANION_ACP_BASES[cc.base], `extends a CodeCompanion ACP adapter (${cc.base})`);
  assert.match(cc.lua, /\binteractions\s*=\s*\{/, "uses CodeCompanion's current `interactions` key");
  assert.doesNotMatch(cc.lua, /\bstrategies\s*=/, "not the deprecated `strategies` key");
});

scenario("docs/editors.md CodeCompanion: the auth method CodeCompanion sends is one the agent advertises, and authenticate succeeds", async (ctx) => {
  const cc = codeCompanionAdapter(DOC);
  const fake = await ctx.fakeModel([]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ provider: "openai", modelUrl: fake.url });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  // CodeCompanion's parameters: fs read/write, no terminal
  const init = await h.initialize({ clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
  const ids = (init.authMethods ?? []).map((m) => m.id);
  // Connection:_authenticate (lua/codecompanion/acp/init.lua): an adapter auth handler wins;
  // otherwise a wanted auth_method that the agent does not advertise is a refusal, and no wanted
  // method means the first advertised one.
  if (cc.authHandler) return;
  if (ids.length === 0) return;
  assert.ok(cc.authMethod === null || ids.includes(cc.authMethod),
    `CodeCompanion would refuse to connect: the snippet's adapter wants auth_method "${cc.authMethod}" (from ${cc.base}), the agent advertises ${ids.join(", ")}`);
  const method = cc.authMethod ?? ids[0];
  assert.deepEqual(await h.request("authenticate", { methodId: method }), {}, `authenticate(${method}) succeeds with a configured model`);
});
