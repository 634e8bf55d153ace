#!/usr/bin/env node
// End-to-end run of the OpenVaala extension in a real VS Code (code-server), driven through
// headless Chromium with playwright-core, against build/openvaala and the fake model server.
// Started by scripts/test-vscode-e2e.sh, which installs code-server and the freshly built .vsix.
//
// env: CODE_SERVER (its bin/code-server), E2E_NODE (the Node code-server runs on), OPENVAALA_BIN,
//      E2E_EXTENSIONS_DIR (where the .vsix was installed), E2E_OUT (screenshots and logs), CHROMIUM.
// Each check prints "ok - ..." or "not ok - ..."; the exit code is the number of failures.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXT = path.resolve(HERE, "..", "..");
const REPO = path.resolve(EXT, "..", "..");
const { startFakeModel } = await import(path.join(REPO, "tests", "fake-model", "fake-model-server.mjs"));

const env = (k) => {
  if (!process.env[k]) throw new Error(`drive.mjs: set ${k}`);
  return process.env[k];
};
const OUT = env("E2E_OUT");
const BIN = env("OPENVAALA_BIN");
fs.mkdirSync(OUT, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failures = 0;
const results = [];
function check(ok, what, detail = "") {
  const line = `${ok ? "ok" : "not ok"} - ${what}${!ok && detail ? ` (${detail})` : ""}`;
  results.push(line);
  console.log(line);
  if (!ok) failures++;
}
async function until(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      /* not there yet */
    }
    if (Date.now() > end) throw new Error(`timeout after ${ms} ms: ${what}`);
    await sleep(200);
  }
}
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---- the world: a workspace, a config root, VS Code's user data ----------------------------
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ov-e2e-")));
const ws = path.join(root, "workspace");
const cfg = path.join(root, "openvaala-config");
const home = path.join(root, "home");
const userData = path.join(root, "user-data");
for (const d of [ws, cfg, home, path.join(userData, "User"), path.join(ws, ".vscode")]) fs.mkdirSync(d, { recursive: true });
fs.writeFileSync(path.join(ws, "a.txt"), "old line\n");
fs.writeFileSync(path.join(ws, ".vscode", "mcp.json"), JSON.stringify({ servers: { e2etools: { type: "stdio", command: process.execPath, args: [path.join(EXT, "test", "fixtures", "mcp-server.mjs")] } } }, null, 2));

const fake = await startFakeModel({ script: [] });
fs.writeFileSync(
  path.join(cfg, "config.yaml"),
  `model: fake/test-model\nproviders:\n  fake:\n    api_type: openai\n    base_url: ${fake.url}/v1\n    api_key_env: FAKE_MODEL_KEY\n    max_retries: 0\n    models: [test-model, other-model]\n`,
);
const serverEnv = { OPENVAALA_CONFIG_DIR: cfg, OPENVAALA_DATA_DIR: path.join(root, "data"), OPENVAALA_CACHE_DIR: path.join(root, "cache"), FAKE_MODEL_KEY: "sk-test" };
const settingsFile = path.join(userData, "User", "settings.json");
function writeSettings(theme) {
  fs.writeFileSync(
    settingsFile,
    JSON.stringify(
      {
        "workbench.colorTheme": theme,
        "workbench.startupEditor": "none",
        "security.workspace.trust.enabled": false,
        "chat.disableAIFeatures": true,
        "workbench.tips.enabled": false,
        "extensions.ignoreRecommendations": true,
        "telemetry.telemetryLevel": "off",
        "workbench.secondarySideBar.defaultVisibility": "hidden",
      },
      null,
      2,
    ),
  );
}
// code-server is a remote window: machine-overridable settings come from the Machine (Remote) settings
fs.mkdirSync(path.join(userData, "Machine"), { recursive: true });
fs.writeFileSync(path.join(userData, "Machine", "settings.json"), JSON.stringify({ "openvaala.path": BIN, "openvaala.env": serverEnv }, null, 2));
writeSettings("Default Light Modern");

// ---- code-server -------------------------------------------------------------------------------
const port = await freePort();
const csLog = fs.createWriteStream(path.join(OUT, "code-server.log"));
const cs = spawn(
  env("E2E_NODE"),
  [env("CODE_SERVER"), "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--user-data-dir", userData, "--extensions-dir", env("E2E_EXTENSIONS_DIR"), ws],
  { env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_DATA_HOME: path.join(home, ".local", "share") }, stdio: ["ignore", "pipe", "pipe"], detached: true },
);
cs.stdout.pipe(csLog);
cs.stderr.pipe(csLog);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
let step = 0;
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
async function shot(name) {
  const file = path.join(OUT, `${String(++step).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
  console.log(`# screenshot ${file}`);
}
const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");

async function runCommand(title) {
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().click();
}

async function send(text) {
  const input = chat().locator("#input");
  const users = await chat().locator(".msg.user").count();
  await input.fill(text);
  await input.press("Enter");
  // the turn has begun once the message is in the chat (else a check could run before it starts)
  await until(async () => (await chat().locator(".msg.user").count()) > users, 20000, `"${text}" in the chat`);
}
async function turnDone(ms = 30000) {
  await until(async () => (await chat().locator("#stop").isHidden()) && !(await chat().locator("#send").isDisabled()), ms, "the turn to end");
}
async function allowPending() {
  const allow = chat().locator(".perm button.allow").first();
  if (await allow.count()) await allow.click();
}
async function finishTurn(ms = 30000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await allowPending();
    if ((await chat().locator("#stop").isHidden()) && !(await chat().locator("#send").isDisabled())) return;
    await sleep(300);
  }
  throw new Error("the turn did not end");
}

try {
  await until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60000, "code-server to listen");
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await until(() => page.locator(".activitybar").isVisible(), 60000, "the workbench");
  const activity = page.locator('.activitybar [aria-label^="OpenVaala"]').first();
  await until(() => activity.isVisible(), 60000, "the OpenVaala activity bar item");
  await activity.click();
  await until(() => chat().locator("#input").isVisible(), 60000, "the chat webview");
  await shot("light-empty-chat");

  // 1. a prompt streams
  fake.push({ chunks: ["Hello ", "from the ", "fake model.\n\n```js\nconst answer = 42;\n```\n"], chunkDelayMs: 400 });
  await send("Say hello");
  const agent = chat().locator(".msg.agent").last();
  const partial = await until(async () => ((await agent.textContent()) || "").trim() || false, 20000, "the first chunk");
  await turnDone();
  const whole = ((await agent.textContent()) || "").trim();
  check(partial.length < whole.length && whole.includes("Hello from the fake model."), "a prompt streams into the chat", `partial=${JSON.stringify(partial)} whole=${JSON.stringify(whole)}`);
  check((await chat().locator(".codeblock .hljs-keyword").count()) > 0 && (await chat().locator(".codeblock button.copy").count()) > 0, "code blocks are highlighted and have a Copy button");
  await shot("light-streamed-answer");

  // 2. the permission prompt shows the diff; the turn lists the changed file; Undo restores it
  const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-old line\n+new line\n*** End Patch";
  fake.push([{ toolCalls: [{ id: "call_edit", name: "apply_patch", arguments: { patch } }] }, { text: "Edited a.txt." }]);
  await send("Edit a.txt");
  const perm = chat().locator(".perm").last();
  await until(() => perm.locator(".inline-diff").isVisible(), 30000, "the permission prompt with its diff");
  const diffText = (await perm.locator(".inline-diff pre").textContent()) || "";
  check(diffText.includes("- old line") && diffText.includes("+ new line"), "the edit permission prompt shows the diff", diffText);
  await shot("light-permission-with-diff");
  await finishTurn();
  check(fs.readFileSync(path.join(ws, "a.txt"), "utf8") === "new line\n", "the allowed edit is on disk");
  const changes = chat().locator(".changes").last();
  check((await changes.locator(".change a").first().textContent())?.endsWith("a.txt") ?? false, "the turn lists the file it changed");
  await shot("light-changed-files");
  await changes.locator("button.undo").click();
  await until(() => fs.readFileSync(path.join(ws, "a.txt"), "utf8") === "old line\n", 10000, "Undo to restore a.txt").then(
    () => check(true, "Undo restores the file as it was before the turn"),
    (e) => check(false, "Undo restores the file as it was before the turn", e.message),
  );
  await shot("light-after-undo");

  // 3. command output stays after the terminal is released
  fake.push([{ toolCalls: [{ id: "call_bash", name: "bash", arguments: { command: "echo e2e-output-marker" } }] }, { text: "Ran it." }]);
  await send("Run a command");
  await finishTurn();
  await sleep(500);
  const termText = (await chat().locator(".term pre").last().textContent()) || "";
  check(termText.includes("e2e-output-marker"), "command output stays displayed after the terminal is released", termText);
  await shot("light-command-output");

  // 4. a VS Code MCP server is called through the tunnel
  const before = fake.requests.length;
  fake.push([{ toolCalls: [{ id: "call_mcp", name: "mcp__e2etools__echo", arguments: { message: "via the tunnel" } }] }, { text: "Tunnel ok." }]);
  await send("Use the MCP tool");
  await finishTurn();
  const toolResult = JSON.stringify(fake.requests.slice(before).map((r) => r.body));
  check(toolResult.includes("Echo: via the tunnel"), "a VS Code MCP server (.vscode/mcp.json) is called through the ACP tunnel", toolResult.slice(0, 300));
  await shot("light-mcp-tunnel");

  // 5. one mode picker; the model picker (the server offers config.yaml's models: list)
  const modePickers = await chat().locator("#bar select").evaluateAll((sels) => sels.filter((s) => [...s.options].some((o) => o.textContent === "Full auto")).length);
  check(modePickers === 1, "one mode picker", `${modePickers} pickers offer the modes`);
  const modelPicker = chat().locator('#bar select[data-category="model"]');
  const values = (await modelPicker.count()) ? await modelPicker.locator("option").evaluateAll((os) => os.map((o) => o.value)) : [];
  check(values.length >= 2 && values[0] === "fake/test-model", "a model picker offers the configured models, the current one first", JSON.stringify(values));
  const other = values.find((v) => v && v !== values[0]);
  if (other) {
    await modelPicker.selectOption(other);
    const n = fake.requests.length;
    fake.push({ text: "Switched." });
    await send("Which model?");
    await turnDone();
    check(fake.requests[n]?.body?.model === other.split("/").pop(), "the model picker switches the model", `${other}: ${fake.requests[n]?.body?.model}`);
    await shot("light-model-picker");
  }

  // 6. Check Configuration runs with openvaala.env (a problem planted in that config root is found)
  fs.mkdirSync(path.join(cfg, "mcp_servers"), { recursive: true });
  fs.writeFileSync(path.join(cfg, "mcp_servers", "broken.yaml"), "command: [unclosed\n");
  await runCommand("OpenVaala: Check Configuration");
  const toast = await until(async () => {
    const t = await page.locator(".notification-toast").allTextContents();
    return t.find((x) => /OpenVaala config check/.test(x));
  }, 30000, "the config check's summary").catch((e) => e.message);
  check(/problem\(s\)/.test(toast), "Check Configuration uses the config root from openvaala.env", toast);
  await shot("light-config-check");

  // 7. the same chat in a dark theme (switched as a user does, so the chat stays)
  await page.keyboard.press("Escape");
  await runCommand("Preferences: Color Theme");
  await page.locator(".quick-input-widget input").fill("Dark Modern");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Dark Modern" }).first().click();
  await until(async () => (await page.locator(".monaco-workbench").getAttribute("class"))?.includes("vs-dark"), 20000, "the dark theme");
  await sleep(1000);
  await shot("dark-chat");
} catch (e) {
  check(false, "the run went through", e.stack || String(e));
  await shot("failure").catch(() => {});
} finally {
  fs.writeFileSync(path.join(OUT, "results.txt"), results.join("\n") + "\n");
  await browser.close().catch(() => {});
  try {
    process.kill(-cs.pid, "SIGTERM");
  } catch {
    /* gone */
  }
  await fake.close();
  fs.rmSync(root, { recursive: true, force: true });
}
console.log(`# ${failures ? `${failures} check(s) failed` : "all checks passed"}; screenshots in ${OUT}`);
process.exit(failures ? 1 : 0);
