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
// an executor besides local (DESIGN.md §10): a virtual one, a local folder seen as / on it
const notes = path.join(root, "notes");
fs.mkdirSync(notes, { recursive: true });
fs.writeFileSync(path.join(notes, "marker.txt"), "read on the notes executor\n");
fs.mkdirSync(path.join(cfg, "executors"), { recursive: true });
fs.writeFileSync(path.join(cfg, "executors", "notes.yaml"), `id: notes\ntype: virtual\nroot: ${notes}\nread_only: true\n`);
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
const csLog = fs.createWriteStream(path.join(OUT, "code-server.log"));
/**
 * code-server on a free port, listening: the port is picked before code-server binds it, and on a
 * busy machine another process can take it in between (EADDRINUSE), so a lost race picks again.
 */
async function startCodeServer(attempts = 3) {
  for (let i = 1; ; i++) {
    const port = await freePort();
    const child = spawn(
      env("E2E_NODE"),
      [env("CODE_SERVER"), "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--user-data-dir", userData, "--extensions-dir", env("E2E_EXTENSIONS_DIR"), ws],
      { env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), XDG_DATA_HOME: path.join(home, ".local", "share") }, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    child.stdout.pipe(csLog, { end: false });
    child.stderr.pipe(csLog, { end: false });
    const exited = new Promise((r) => child.once("exit", () => r(false)));
    const listening = until(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60000, "code-server to listen");
    listening.catch(() => {}); // an exit first leaves this poll to time out unheard
    if (await Promise.race([listening, exited])) return { cs: child, port };
    if (i >= attempts) throw new Error(`code-server did not start in ${attempts} attempts (see code-server.log)`);
  }
}
const { cs, port } = await startCodeServer();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
let step = 0;
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
async function shot(name) {
  const file = path.join(OUT, `${String(++step).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
  console.log(`# screenshot ${file}`);
}
// the webviews in creation order: the side bar chat first, then chats in editor tabs
const webview = (n) => page.frameLocator("iframe.webview.ready").nth(n).frameLocator("iframe#active-frame");
const chat = () => webview(0);

async function runCommand(title) {
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().click();
}

async function send(text, view = chat()) {
  const input = view.locator("#input");
  const users = await view.locator(".msg.user").count();
  await input.fill(text);
  await input.press("Enter");
  // the turn has begun once the message is in the chat (else a check could run before it starts)
  await until(async () => (await view.locator(".msg.user").count()) > users, 20000, `"${text}" in the chat`);
}
async function turnDone(ms = 30000, view = chat()) {
  await until(async () => (await view.locator("#stop").isHidden()) && !(await view.locator("#send").isDisabled()), ms, "the turn to end");
}
/** opens a workspace file in the editor (Quick Open) */
async function openFile(name) {
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().click();
  await sleep(1000);
  await until(() => page.locator(".tabs-container .tab.active", { hasText: name }).isVisible(), 10000, `${name} in the editor`);
}
/** the lines of the active editor that carry the extension's decoration (VS Code's `ced-` classes) */
async function highlightedLines() {
  await sleep(500);
  return page.locator(".editor-group-container.active .monaco-editor .view-overlays [class*='ced-']").count();
}
/** `@` in the input, then the file picked in VS Code's quick pick */
async function attachFile(view, name) {
  const chips = await view.locator("#chips .chip").count();
  await view.locator("#input").press("End");
  await view.locator("#input").pressSequentially(" @");
  await until(() => page.locator(".quick-input-widget").isVisible(), 10000, "the file picker");
  await page.locator(".quick-input-widget input").fill(name);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().click();
  await until(async () => (await view.locator("#chips .chip").count()) > chips, 10000, `${name} as a chip`);
}
/** the chat webview (side bar or tab) that shows `selector`, waiting for it up to `ms` */
async function findWebview(selector, ms = 10000) {
  return until(async () => {
    const n = await page.locator("iframe.webview.ready").count();
    for (let i = 0; i < n; i++) if ((await webview(i).locator(selector).count()) > 0) return webview(i);
    return undefined;
  }, ms, `a chat showing ${selector}`);
}
const EDIT_PATCH = (from, to) => `*** Begin Patch\n*** Update File: a.txt\n@@\n-${from}\n+${to}\n*** End Patch`;
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

let networkServer; // step 9's `openvaala acp --listen`
try {
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
  // the edit's diff opened by itself (openvaala.openDiffAfterEdit), and the file shows the edited line highlighted
  check(await page.locator(".tabs-container .tab", { hasText: "a.txt: edited by OpenVaala" }).isVisible(), "the diff of the edit opens after the edit");
  await shot("light-diff-after-edit");
  await openFile("a.txt");
  const lit = await highlightedLines();
  check(lit > 0, "the edited line is highlighted in the editor", `${lit} decorated lines`);
  await shot("light-edit-highlight");
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

  // 5b. the executor picker (executors/notes.yaml exists): labelled, and a pick moves the session's tools there
  const execPicker = chat().locator("#bar label.picker", { has: chat().locator('select[data-option="executor"]') });
  const execLabel = (await execPicker.count()) ? ((await execPicker.locator(".picker-name").textContent()) || "").trim() : "";
  const execSelect = chat().locator('#bar select[data-option="executor"]');
  const execValues = (await execSelect.count()) ? await execSelect.locator("option").evaluateAll((os) => os.map((o) => o.value)) : [];
  check(execLabel === "Executor" && execValues.includes("local") && execValues.includes("notes"), "an executor picker of its own, labelled, offers local and executors/notes.yaml", `label=${JSON.stringify(execLabel)} values=${JSON.stringify(execValues)}`);
  if (execValues.includes("notes")) {
    await execSelect.selectOption("notes");
    await until(async () => (await execSelect.inputValue()) === "notes", 10000, "the executor picker to show notes").catch(() => {});
    await shot("light-executor-picker");
    const n = fake.requests.length;
    fake.push([{ toolCalls: [{ id: "call_exec_read", name: "read_file", arguments: { path: "/marker.txt" } }] }, { text: "Read it there." }]);
    await send("Read the marker");
    await finishTurn();
    const seen = JSON.stringify(fake.requests.slice(n).map((r) => r.body));
    check(seen.includes("read on the notes executor"), "picking an executor sets it for the session (session/set_config_option): read_file reads on notes", seen.slice(0, 300));
    await execSelect.selectOption("local");
    await until(async () => (await execSelect.inputValue()) === "local", 10000, "the executor back to local");
  }

  // 6a. a message sent during a turn is steered into it (the agent advertises _session/steering)
  fake.push({ chunks: ["Working ", "on ", "it ", "slowly."], chunkDelayMs: 1500 });
  fake.push({ text: "Follow-up answered." });
  await send("Slow task");
  await chat().locator("#input").fill("steered follow-up");
  await chat().locator("#input").press("Enter");
  const steered = chat().locator(".msg.user.steered", { hasText: "steered follow-up" });
  await until(() => steered.isVisible(), 5000, "the steered message").then(
    () => check(true, "a message sent during a turn is steered into it, marked"),
    (e) => check(false, "a message sent during a turn is steered into it, marked", e.message),
  );
  await shot("light-steered-message");
  await turnDone();
  const answeredBody = JSON.stringify(fake.requests.at(-1)?.body ?? {});
  check(
    ((await chat().locator(".msg.agent").last().textContent()) || "").includes("Follow-up answered.") &&
      answeredBody.includes("steered follow-up") && (await chat().locator("#queue").isHidden()),
    "the running turn answers the steered message, and nothing is queued",
    answeredBody.slice(-300),
  );

  // 6b. Stop ends the turn; a message steered into it reaches the model with the next prompt
  fake.push({ chunks: ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h"], chunkDelayMs: 1500 });
  await send("Another slow task");
  await chat().locator("#input").fill("after stop");
  await chat().locator("#input").press("Enter");
  await until(() => chat().locator(".msg.user.steered", { hasText: "after stop" }).isVisible(), 5000, "the second steered message");
  const sentBefore = fake.requests.length;
  await chat().locator("#stop").click();
  await turnDone();
  await sleep(1500);
  check(fake.requests.length === sentBefore, "after Stop no model request answers the steered message", `requests ${sentBefore} -> ${fake.requests.length}`);
  await shot("light-steered-after-stop");
  fake.push({ text: "Sent next." });
  await send("and now?");
  await turnDone();
  check(
    JSON.stringify(fake.requests.at(-1)?.body ?? {}).includes("after stop") &&
      ((await chat().locator(".msg.agent").last().textContent()) || "").includes("Sent next."),
    "a message steered into a stopped turn reaches the model with the next prompt",
  );

  // 6c. @ attaches a workspace file, a pasted image attaches itself; both reach the model
  await chat().locator("#input").fill("Describe these");
  await attachFile(chat(), "a.txt");
  await chat().locator("#input").evaluate((el) => {
    const png = atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==");
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(png, (c) => c.charCodeAt(0))], "image.png", { type: "image/png" }));
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await until(async () => (await chat().locator("#chips .chip").count()) === 2, 5000, "the pasted image as a chip").catch(() => {});
  const chipNames = await chat().locator("#chips .chip").evaluateAll((cs) => cs.map((c) => c.getAttribute("title")));
  check(chipNames.length === 2 && chipNames[0] === "a.txt" && /pasted image/.test(chipNames[1] ?? ""), "@ and a pasted image show as chips in the input", JSON.stringify(chipNames));
  check(!(await chat().locator("#input").inputValue()).includes("@"), "the @ gives way to the chip");
  await shot("light-attachments");
  const askedBefore = fake.requests.length;
  fake.push({ text: "A file and an image." });
  await chat().locator("#input").press("Enter");
  await until(async () => (await chat().locator(".msg.user .chip").count()) >= 2, 10000, "the message with its attachments");
  await turnDone();
  const lastUser = JSON.stringify(fake.requests[askedBefore]?.body?.messages?.at(-1) ?? {});
  check(lastUser.includes("data:image/png;base64,iVBOR"), "the pasted image reaches the model (ACP image block)", lastUser.slice(0, 400));
  check(lastUser.includes("old line"), "the @ file's text reaches the model (ACP embedded resource)", lastUser.slice(0, 400));
  await shot("light-sent-attachments");

  // 6d. a chat in an editor tab: its own session over the same server
  await runCommand("OpenVaala: New Chat in Editor Tab");
  await until(async () => (await page.locator("iframe.webview.ready").count()) >= 2, 30000, "the chat tab");
  const tab = webview(1);
  await until(() => tab.locator("#input").isVisible(), 30000, "the tab's input");
  check(await page.locator(".tabs-container .tab", { hasText: "OpenVaala Chat" }).isVisible(), "New Chat in Editor Tab opens a chat tab in the editor area");
  fake.push({ text: "Hello from the tab." });
  await send("Hello tab", tab);
  await turnDone(30000, tab);
  const tabAnswer = (await tab.locator(".msg.agent").last().textContent()) || "";
  const sideAnswer = (await chat().locator(".msg.agent").last().textContent()) || "";
  check(tabAnswer.includes("Hello from the tab.") && !sideAnswer.includes("Hello from the tab.") && (await tab.locator(".msg.user").count()) === 1, "the tab is a chat of its own; the side bar chat is untouched", `tab=${tabAnswer} side=${sideAnswer}`);
  await shot("light-chat-tab");
  // History opens a stored session (the side bar's, after New) into another tab
  await chat().locator("#bar button", { hasText: "New" }).click();
  await until(async () => (await chat().locator(".msg").count()) === 0, 15000, "the side bar's new chat");
  await chat().locator("#bar button", { hasText: "History" }).click();
  const stored = chat().locator("#sessions .session", { hasText: "Say hello" });
  await until(async () => (await stored.count()) > 0, 15000, "the first session in the history");
  await shot("light-history-open-in-tab");
  await stored.first().locator(".open-tab").click();
  await until(async () => (await page.locator("iframe.webview.ready").count()) >= 3, 30000, "the history tab");
  await until(async () => (await webview(2).locator(".msg.user").count()) > 0, 30000, "the session's messages in the tab").then(
    () => check(true, "History opens a stored session into an editor tab"),
    (e) => check(false, "History opens a stored session into an editor tab", e.message),
  );
  await shot("light-history-tab");

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
  // the edit highlight in the dark theme
  fake.push([{ toolCalls: [{ id: "call_edit2", name: "apply_patch", arguments: { patch: EDIT_PATCH("old line", "dark line") } }] }, { text: "Edited again." }]);
  await send("Edit a.txt again");
  await finishTurn();
  await openFile("a.txt");
  const darkLit = await highlightedLines();
  check(darkLit > 0, "the edit highlight shows in the dark theme", `${darkLit}`);
  await shot("dark-edit-highlight");
  // a queued message and attachment chips in the dark theme
  fake.push({ chunks: ["Thinking ", "in ", "the ", "dark."], chunkDelayMs: 1500 });
  fake.push({ text: "Done." });
  await send("Slow in the dark");
  await chat().locator("#input").fill("a queued message in the dark");
  await chat().locator("#input").press("Enter");
  await chat().locator("#input").fill("With a file");
  await attachFile(chat(), "a.txt");
  await shot("dark-queue-and-chips");
  await until(async () => (await chat().locator(".msg.agent", { hasText: "Done." }).count()) > 0, 30000, "the queued message answered");
  await page.locator(".tabs-container .tab", { hasText: "OpenVaala: Hello tab" }).first().click();
  await sleep(800);
  await shot("dark-chat-tab");

  // 8. a window reload: the chat tabs come back with their sessions, the side bar with its chat
  // (a message sent during a turn is steered into it, not queued: the queue is for agents without steering)
  const tabView = await findWebview('.msg.user:has-text("Hello tab")');
  fake.push({ chunks: ["x ", "y ", "z ", "w ", "v"], chunkDelayMs: 1500 });
  await send("Slow before the reload", tabView);
  await tabView.locator("#stop").click();
  await turnDone(30000, tabView);
  // the message's own text (not its marker or its buttons)
  const sideLast = ((await chat().locator(".msg.user pre").last().textContent()) || "").trim();
  // chat tabs only ("OpenVaala: <title>", "OpenVaala Chat"): a diff tab (a virtual document) does not come back
  const chatTabLocator = () => page.locator(".tabs-container .tab", { hasText: /OpenVaala(: | Chat)/ });
  const chatTabs = await chatTabLocator().count();
  const asked = fake.requests.length;
  await runCommand("Developer: Reload Window");
  await sleep(3000);
  await until(() => page.locator(".activitybar").isVisible(), 60000, "the workbench after the reload");
  await until(async () => chatTabs >= 2 && (await chatTabLocator().count()) === chatTabs, 30000, `the ${chatTabs} chat tabs after the reload`).then(
    () => check(true, "the chat tabs are still there after a window reload"),
    (e) => check(false, "the chat tabs are still there after a window reload", e.message),
  );
  await page.locator(".tabs-container .tab", { hasText: "Hello tab" }).first().click();
  const restoredTab = await findWebview('.msg.user:has-text("Hello tab")', 60000).catch(() => undefined);
  check(!!restoredTab, "a chat tab shows its session again after a window reload");
  await sleep(1000);
  check(fake.requests.length === asked, "a window reload sends nothing to the model behind the user's back", `${asked} -> ${fake.requests.length}`);
  const sideBack = await findWebview(`.msg.user:has-text(${JSON.stringify(sideLast)})`, 30000).then(() => true, () => false);
  check(sideBack, "the side bar chat shows its session again after a window reload", sideLast);
  await shot("dark-after-reload");

  // 9. a server already running (a dev box, a codespace): openvaala.server.url and a token file;
  // the chat talks to it over the network and no process is started by the extension
  const tokenFile = path.join(root, "acp-token");
  fs.writeFileSync(tokenFile, "e2e-network-token\n", { mode: 0o600 });
  networkServer = spawn(BIN, ["acp", "--listen", "127.0.0.1:0", "--token-file", tokenFile], { cwd: ws, env: { ...process.env, ...serverEnv }, stdio: ["ignore", "ignore", "pipe"] });
  const acpUrl = await new Promise((resolve, reject) => {
    let err = "";
    networkServer.stderr.on("data", (d) => {
      err += d;
      const m = /listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    networkServer.once("exit", (c) => reject(new Error(`the network server exited (${c}): ${err}`)));
  });
  fs.writeFileSync(path.join(userData, "Machine", "settings.json"), JSON.stringify({ "openvaala.path": "/nonexistent/openvaala", "openvaala.env": serverEnv, "openvaala.server.url": acpUrl, "openvaala.server.tokenFile": tokenFile }, null, 2));
  await sleep(1500); // the settings file watcher
  await runCommand("OpenVaala: Restart Server");
  await until(async () => (await chat().locator(".msg.user").count()) === 0, 20000, "the chat cleared by the restart");
  fake.push({ chunks: ["Answered by the server ", "at a URL."] });
  await send("Over the network");
  const overUrl = await until(async () => (await chat().locator(".msg.agent", { hasText: "Answered by the server at a URL." }).count()) > 0, 30000, "the answer over the network").catch(() => false);
  check(!!overUrl, "with openvaala.server.url the chat talks to the running server (openvaala.path points nowhere)");
  await shot("dark-chat-over-url");
} catch (e) {
  check(false, "the run went through", e.stack || String(e));
  await shot("failure").catch(() => {});
} finally {
  fs.writeFileSync(path.join(OUT, "results.txt"), results.join("\n") + "\n");
  networkServer?.kill("SIGTERM");
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
