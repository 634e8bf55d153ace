// The chat webview (browser side). Receives the view model from the extension host, renders it,
// and posts user actions back. Markdown through `marked` with raw HTML escaped.
import { marked } from "marked";
import hljs from "highlight.js/lib/common";
import type { FromWebview, ToWebview, ViewModel } from "../core/webviewProtocol.js";
import { sessionUsage, type ChatItem, type ToolCallState } from "../core/chatState.js";
import { sessionUsageText, turnUsageText } from "../core/usage.js";
import { completeSlash, enterCompletes, slashQuery, type SlashSuggestion } from "../core/slash.js";
import { lineDiff } from "../core/lineDiff.js";
import { historyEntries } from "../core/history.js";
import { atTyped, imageFromDataUrl, type Attachment } from "../core/attachments.js";

declare function acquireVsCodeApi(): { postMessage(m: FromWebview): void; getState(): unknown; setState(s: unknown): void };
const vscode = acquireVsCodeApi();
const post = (m: FromWebview) => vscode.postMessage(m);

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
/** a fenced code block: highlighted (tokens coloured by the theme in chat.css) with a Copy button */
function codeBlock(t: { text: string; lang?: string }): string {
  const lang = (t.lang ?? "").trim().split(/\s/)[0] ?? "";
  let body: string;
  if (lang && hljs.getLanguage(lang)) body = hljs.highlight(t.text, { language: lang, ignoreIllegals: true }).value;
  else if (t.text.length <= MAX_AUTO_HIGHLIGHT) body = hljs.highlightAuto(t.text).value;
  else body = esc(t.text);
  return `<div class="codeblock"><button class="copy" title="Copy to the clipboard">Copy</button><pre><code class="hljs${lang ? ` language-${esc(lang)}` : ""}">${body}</code></pre></div>`;
}
const MAX_AUTO_HIGHLIGHT = 20_000;
marked.use({ gfm: true, breaks: false, renderer: { html: (t: { text: string }) => esc(t.text), code: codeBlock } });
const md = (s: string) => marked.parse(s, { async: false }) as string;

let model: ViewModel | undefined;
const itemCache = new Map<string, { rev: number; el: HTMLElement }>();
let suggestions: SlashSuggestion[] = [];
let selected = 0;
let showSessions = false;
/** files and images attached to the message being typed (chips above the input) */
let attachments: Attachment[] = [];
/** where the `@` that opened the file picker was typed (taken out when a file is picked) */
let atPos: number | undefined;
let attachCounter = 0;

function h(tag: string, attrs: Record<string, string> = {}, html = ""): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (html) el.innerHTML = html;
  return el;
}

const app = document.getElementById("app")!;
app.innerHTML = `
  <header id="bar"></header>
  <div id="sessions" hidden></div>
  <main id="log"></main>
  <footer>
    <div id="completion" hidden></div>
    <div id="error" hidden></div>
    <div id="queue" hidden></div>
    <div id="chips" hidden></div>
    <textarea id="input" rows="3" placeholder="Ask OpenVaala… (/ for commands, @ to attach a file, Enter to send, Shift+Enter for a new line)"></textarea>
    <div id="actions"><button id="attach" class="secondary" title="Attach a workspace file (@); paste an image with Ctrl+V">@ Attach</button><span id="status"></span><button id="stop" hidden title="Stop (session/cancel)">Stop</button><button id="send">Send</button></div>
  </footer>`;
const bar = document.getElementById("bar")!;
const log = document.getElementById("log")!;
const input = document.getElementById("input") as HTMLTextAreaElement;
const completion = document.getElementById("completion")!;
const errorEl = document.getElementById("error")!;
const sessionsEl = document.getElementById("sessions")!;
const stopBtn = document.getElementById("stop")!;
const sendBtn = document.getElementById("send")!;
const statusEl = document.getElementById("status")!;
const queueEl = document.getElementById("queue")!;
const chipsEl = document.getElementById("chips")!;

/** sends the message (the host queues it while a turn runs) */
function send() {
  const text = input.value.trim();
  if (!text && !attachments.length) return;
  input.value = "";
  hideCompletion();
  post(attachments.length ? { type: "send", text, attachments } : { type: "send", text });
  attachments = [];
  renderChips();
}

function chip(name: string, kind: string, onRemove?: () => void): HTMLElement {
  const el = h("span", { class: `chip chip-${kind}`, title: name }, esc(name));
  if (onRemove) {
    const x = h("button", { class: "chip-remove", title: `Remove ${name}` }, "×");
    x.addEventListener("click", onRemove);
    el.appendChild(x);
  }
  return el;
}

function renderChips() {
  chipsEl.replaceChildren(
    ...attachments.map((a) =>
      chip(a.name, a.kind, () => {
        attachments = attachments.filter((x) => x !== a);
        renderChips();
        input.focus();
      }),
    ),
  );
  chipsEl.hidden = !attachments.length;
}

function addAttachment(a: Attachment) {
  if (a.kind === "file" && attachments.some((x) => x.kind === "file" && x.path === a.path)) return;
  attachments = [...attachments, a];
  renderChips();
}

/** messages typed during the turn: each can go back into the input or be removed; after Stop, sent by hand */
function renderQueue(m: ViewModel) {
  queueEl.replaceChildren(
    ...m.queue.map((q) => {
      const row = h("div", { class: "queued" }, `<span class="badge">Queued</span> <span class="queued-text" title="${esc(q.text)}">${esc(q.text)}</span>`);
      for (const n of q.attachments) row.appendChild(chip(n, "file"));
      const buttons: [string, string, FromWebview][] = [
        ...(!m.chat.busy ? [["Send", "Send this message now", { type: "sendQueued", id: q.id }] as [string, string, FromWebview]] : []),
        ["Edit", "Take it back into the input", { type: "unqueue", id: q.id, edit: true }],
        ["×", "Remove it from the queue", { type: "unqueue", id: q.id }],
      ];
      for (const [label, title, msg] of buttons) {
        const b = h("button", { class: "secondary", title }, esc(label));
        b.addEventListener("click", () => post(msg));
        row.appendChild(b);
      }
      return row;
    }),
  );
  queueEl.hidden = !m.queue.length;
}

document.getElementById("attach")!.addEventListener("click", () => {
  atPos = undefined;
  post({ type: "pickFile" });
});
input.addEventListener("input", () => {
  const caret = input.selectionStart ?? input.value.length;
  if (atTyped(input.value, caret)) {
    atPos = caret - 1;
    post({ type: "pickFile" });
  }
});
// a pasted image becomes an attachment (text pastes as usual)
input.addEventListener("paste", (e) => {
  const files = Array.from(e.clipboardData?.items ?? []).filter((i) => i.kind === "file" && i.type.startsWith("image/")).map((i) => i.getAsFile());
  if (!files.length) return;
  e.preventDefault();
  for (const f of files) {
    if (!f) continue;
    const reader = new FileReader();
    reader.onload = () => {
      const img = imageFromDataUrl(String(reader.result));
      if (img) addAttachment({ kind: "image", id: `img${++attachCounter}`, name: f.name && f.name !== "image.png" ? f.name : `pasted image ${attachCounter}`, ...img });
    };
    reader.readAsDataURL(f);
  }
});
sendBtn.addEventListener("click", send);
// Copy buttons of code blocks (rendered as HTML strings, so one listener for all of them)
log.addEventListener("click", (e) => {
  const btn = (e.target as HTMLElement).closest?.(".codeblock .copy");
  const code = btn?.parentElement?.querySelector("code");
  if (!btn || !code) return;
  post({ type: "copyText", text: code.textContent ?? "" });
  btn.textContent = "Copied";
});
stopBtn.addEventListener("click", () => post({ type: "stop" }));

function updateCompletion() {
  const q = slashQuery(input.value, input.selectionStart ?? input.value.length);
  if (q === undefined || !model) return hideCompletion();
  suggestions = completeSlash(model.chat.commands, q);
  if (!suggestions.length) return hideCompletion();
  selected = Math.min(selected, suggestions.length - 1);
  completion.innerHTML = "";
  suggestions.forEach((s, i) => {
    const row = h("div", { class: `sugg${i === selected ? " sel" : ""}` });
    row.innerHTML = `<span class="name">/${esc(s.name)}</span>${s.hint ? ` <span class="hint">${esc(s.hint)}</span>` : ""}<div class="desc">${esc(s.description)}</div>`;
    row.addEventListener("mousedown", (e) => {
      e.preventDefault();
      accept(i);
    });
    completion.appendChild(row);
  });
  completion.hidden = false;
}
function hideCompletion() {
  suggestions = [];
  selected = 0;
  completion.hidden = true;
}
function accept(i: number) {
  const s = suggestions[i];
  if (!s) return;
  const rest = input.value.replace(/^\/\S*\s?/, "");
  input.value = s.insertText + rest;
  input.setSelectionRange(input.value.length, input.value.length);
  hideCompletion();
  input.focus();
}
input.addEventListener("input", updateCompletion);
input.addEventListener("keydown", (e) => {
  if (suggestions.length) {
    if (e.key === "ArrowDown") {
      selected = (selected + 1) % suggestions.length;
      updateCompletion();
      e.preventDefault();
      return;
    }
    if (e.key === "ArrowUp") {
      selected = (selected - 1 + suggestions.length) % suggestions.length;
      updateCompletion();
      e.preventDefault();
      return;
    }
    if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && enterCompletes(input.value, suggestions[selected]))) {
      accept(selected);
      e.preventDefault();
      return;
    }
    if (e.key === "Escape") {
      hideCompletion();
      return;
    }
  }
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    send();
  }
});

function renderBar(m: ViewModel) {
  bar.innerHTML = "";
  if (m.folders.length > 1) {
    const sel = h("select", { title: "Workspace folder" }) as HTMLSelectElement;
    for (const f of m.folders) {
      const o = h("option", { value: f.uri }, esc(f.name)) as HTMLOptionElement;
      if (f.uri === m.currentFolder) o.selected = true;
      sel.appendChild(o);
    }
    sel.addEventListener("change", () => post({ type: "selectFolder", uri: sel.value }));
    bar.appendChild(sel);
  }
  const modes = m.chat.modes;
  // ACP: a client that shows config options ignores the older `modes` when a mode option exists
  const modeOption = m.chat.configOptions.some((o) => (o as { category?: string }).category === "mode" || o.id === "mode");
  if (modes && modes.availableModes.length && !modeOption) {
    const sel = h("select", { title: "Mode" }) as HTMLSelectElement;
    for (const md of modes.availableModes) {
      const o = h("option", { value: md.id, title: md.description ?? "" }, esc(md.name)) as HTMLOptionElement;
      if (md.id === modes.currentModeId) o.selected = true;
      sel.appendChild(o);
    }
    sel.addEventListener("change", () => post({ type: "setMode", modeId: sel.value }));
    bar.appendChild(sel);
  }
  for (const opt of orderedOptions(m.chat.configOptions)) {
    if (opt.type === "boolean") {
      const lab = h("label", { title: opt.description ?? "" });
      const cb = h("input", { type: "checkbox" }) as HTMLInputElement;
      cb.checked = !!opt.currentValue;
      cb.addEventListener("change", () => post({ type: "setConfig", configId: opt.id, value: cb.checked }));
      lab.append(cb, document.createTextNode(` ${opt.name}`));
      bar.appendChild(lab);
      continue;
    }
    if (opt.type !== "select") continue;
    const category = (opt as { category?: string | null }).category;
    const sel = h("select", { title: `${opt.name}${opt.description ? `: ${opt.description}` : ""}`, "data-option": opt.id, ...(category ? { "data-category": category } : {}) }) as HTMLSelectElement;
    type Value = { value: string; name: string; description?: string | null };
    const groups = opt.options as unknown as (Value | { group: string; name: string; options: Value[] })[];
    const addOpt = (parent: HTMLElement, o: Value) => {
      const el = h("option", { value: o.value, ...(o.description ? { title: o.description } : {}) }, esc(o.name)) as HTMLOptionElement;
      if (o.value === opt.currentValue) el.selected = true;
      parent.appendChild(el);
    };
    for (const g of groups) {
      if ("group" in g) {
        const og = h("optgroup", { label: g.name });
        g.options.forEach((o) => addOpt(og, o));
        sel.appendChild(og);
      } else addOpt(sel, g);
    }
    sel.addEventListener("change", () => post({ type: "setConfig", configId: opt.id, value: sel.value }));
    // a mode or a model speaks for itself; any other choice (executor, agent, thought level) is named
    if (SELF_EVIDENT.has(category ?? opt.id)) bar.appendChild(sel);
    else {
      const lab = h("label", { class: "picker" }, `<span class="picker-name">${esc(opt.name)}</span>`);
      lab.appendChild(sel);
      bar.appendChild(lab);
    }
  }
  const spacer = h("span", { class: "spacer" });
  bar.appendChild(spacer);
  if (m.supportsSessionList) {
    const b = h("button", { title: "Previous sessions" }, "History");
    b.addEventListener("click", () => {
      showSessions = !showSessions;
      if (showSessions) post({ type: "listSessions" });
      renderSessions(m);
    });
    bar.appendChild(b);
  }
  const usage = sessionUsageText(sessionUsage(m.chat));
  if (usage) bar.appendChild(h("span", { class: "usage", title: usage.title }, esc(usage.text)));
  const nb = h("button", { title: "New chat" }, "New");
  nb.addEventListener("click", () => post({ type: "newChat" }));
  bar.appendChild(nb);
}

const SELF_EVIDENT = new Set(["mode", "model"]);

/** mode and model pickers first (ACP categories), the rest in the agent's order */
function orderedOptions(options: ViewModel["chat"]["configOptions"]) {
  const rank = (o: { category?: string | null }) => ({ mode: 0, model: 1, model_config: 2, thought_level: 3 })[o.category ?? ""] ?? 4;
  return options.map((o, i) => ({ o, i })).sort((a, b) => rank(a.o) - rank(b.o) || a.i - b.i).map((x) => x.o);
}

function renderSessions(m: ViewModel) {
  sessionsEl.hidden = !showSessions;
  if (!showSessions) return;
  const entries = historyEntries(m.sessions, new Date(), m.chat.sessionId);
  sessionsEl.innerHTML = entries.length ? "" : "<div class='muted'>No previous sessions.</div>";
  for (const s of entries) {
    const row = h("div", { class: "session" }, `<span class="session-title">${esc(s.title)}<span class="muted"> ${esc(s.when)}</span></span>`);
    row.addEventListener("click", () => {
      showSessions = false;
      sessionsEl.hidden = true;
      post({ type: "loadSession", sessionId: s.sessionId });
    });
    const tab = h("button", { class: "secondary open-tab", title: "Open this session in an editor tab" }, "Open in tab");
    tab.addEventListener("click", (e) => {
      e.stopPropagation();
      showSessions = false;
      sessionsEl.hidden = true;
      post({ type: "openSessionInTab", sessionId: s.sessionId });
    });
    row.appendChild(tab);
    sessionsEl.appendChild(row);
  }
}

const KIND_ICON: Record<string, string> = { read: "📖", edit: "✏️", delete: "🗑", move: "↔", search: "🔍", execute: "▶", think: "💭", fetch: "🌐", switch_mode: "⇄", other: "🔧" };

function renderTool(m: ViewModel, t: ToolCallState): HTMLElement {
  const el = h("div", { class: `tool status-${t.status}` });
  const head = h("div", { class: "tool-head" }, `<span class="icon">${KIND_ICON[t.kind] ?? "🔧"}</span> <span class="title">${esc(t.title || t.kind)}</span> <span class="badge">${esc(t.kind)}</span> <span class="badge st">${esc(t.status.replace("_", " "))}</span>`);
  el.appendChild(head);
  if (t.locations.length) {
    const locs = h("div", { class: "locs" });
    for (const l of t.locations) {
      const a = h("a", { href: "#" }, esc(`${l.path}${l.line ? `:${l.line}` : ""}`));
      a.addEventListener("click", (e) => {
        e.preventDefault();
        post({ type: "openLocation", path: l.path, line: l.line ?? null });
      });
      locs.appendChild(a);
    }
    el.appendChild(locs);
  }
  t.content.forEach((c, index) => {
    if (c.type === "diff") {
      const d = h("div", { class: "diff" }, `<span>${esc(c.path)}</span> `);
      const b = h("button", {}, "Open diff");
      b.addEventListener("click", () => post({ type: "openDiff", toolCallId: t.toolCallId, index }));
      d.appendChild(b);
      el.appendChild(d);
    } else if (c.type === "terminal") {
      const term = m.terminals.find((x) => x.id === c.terminalId);
      const box = h("div", { class: "term" });
      const shown = term ? (term.truncated ? "…" : "") + term.output : (reportedOutput(t) ?? "(no output recorded)");
      box.appendChild(h("pre", {}, esc(shown)));
      if (term) {
        const b = h("button", {}, "Show in terminal");
        b.addEventListener("click", () => post({ type: "showTerminal", terminalId: c.terminalId }));
        box.appendChild(b);
      }
      el.appendChild(box);
    } else if (c.type === "content") {
      const b = c.content;
      if (b.type === "text") el.appendChild(h("div", { class: "tool-out md" }, md(b.text)));
    }
  });
  return el;
}

/** a proposed edit, line by line, with a button for the full diff editor */
function renderInlineDiff(toolCallId: string, index: number, c: { path: string; oldText?: string | null; newText: string }): HTMLElement {
  const box = h("div", { class: "inline-diff" }, `<div class="diff-path">${esc(c.path)}</div>`);
  const lines = lineDiff(c.oldText ?? "", c.newText);
  const shown = lines.slice(0, 200);
  const pre = h("pre");
  for (const l of shown) pre.appendChild(h("div", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "ctx" }, esc(`${l.op} ${l.text}`)));
  if (lines.length > shown.length) pre.appendChild(h("div", { class: "ctx" }, esc(`… ${lines.length - shown.length} more lines`)));
  box.appendChild(pre);
  const b = h("button", {}, "Open diff");
  b.addEventListener("click", () => post({ type: "openDiff", toolCallId, index }));
  box.appendChild(b);
  return box;
}

const UNDO_WORDS: Record<string, string> = { restored: "restored", deleted: "deleted (the turn created it)", "changed-since": "not restored: changed after the turn", failed: "not restored" };

/** the files a turn changed: each opens its diff; "Undo" puts them all back as they were before the turn */
function renderChanges(item: Extract<ChatItem, { kind: "changes" }>): HTMLElement {
  const el = h("div", { class: "changes" }, `<div class="changes-head">Changed ${item.files.length} file${item.files.length === 1 ? "" : "s"}</div>`);
  for (const f of item.files) {
    const row = h("div", { class: "change" });
    const a = h("a", { href: "#", title: "Open the diff of this turn" }, esc(f.path));
    a.addEventListener("click", (e) => {
      e.preventDefault();
      post({ type: "openChangeDiff", itemId: item.id, path: f.path });
    });
    row.appendChild(a);
    if (f.before === null) row.appendChild(h("span", { class: "muted" }, " (new)"));
    const outcome = item.undo?.find((o) => o.path === f.path);
    if (outcome) row.appendChild(h("span", { class: `undo-${outcome.result}` }, ` — ${esc(UNDO_WORDS[outcome.result] ?? outcome.result)}${outcome.message ? `: ${esc(outcome.message)}` : ""}`));
    el.appendChild(row);
  }
  if (!item.undo) {
    const b = h("button", { class: "undo", title: "Restore these files as they were before this turn" }, "Undo");
    b.addEventListener("click", () => post({ type: "undoTurn", itemId: item.id }));
    el.appendChild(b);
  }
  return el;
}

/** a released terminal is gone from the manager; a replayed one never existed here: show what the tool call reported */
function reportedOutput(t: ToolCallState): string | undefined {
  const r = t.rawOutput as { output?: unknown; stdout?: unknown } | string | undefined | null;
  if (typeof r === "string") return r;
  if (r && typeof r.output === "string") return r.output;
  if (r && typeof r.stdout === "string") return r.stdout;
  return undefined;
}

const COMPACTION_WORDS: Record<string, string> = { in_progress: "in progress", completed: "done", failed: "failed", cancelled: "cancelled" };

function renderItem(m: ViewModel, item: ChatItem): HTMLElement {
  switch (item.kind) {
    case "user": {
      const el = h("div", { class: item.steered ? "msg user steered" : "msg user" }, `<pre>${esc(item.text)}</pre>`);
      if (item.steered) el.prepend(h("div", { class: "steered-mark", title: "Sent into the running turn: the agent reads it at its next step" }, "↪ steered into the turn"));
      if (item.attachments?.length) el.appendChild(h("div", { class: "chips" })).append(...item.attachments.map((n) => chip(n, "file")));
      // a message the server knows by its id can be taken back (the chat refuses during a turn)
      if (item.messageId) {
        const actions = el.appendChild(h("div", { class: "msg-actions" }));
        const edit = h("button", { class: "edit-resend", title: "Take this message and everything after it back, and put it in the input" }, "Edit and resend");
        edit.addEventListener("click", () => post({ type: "editResend", itemId: item.id }));
        const restore = h("button", { class: "restore-files", title: "Put the files the agent changed from this message on back (lists them first)" }, "Restore files to here");
        restore.addEventListener("click", () => post({ type: "restoreFiles", itemId: item.id }));
        actions.append(edit, restore);
      }
      return el;
    }
    case "agent":
      return h("div", { class: "msg agent md" }, md(item.text));
    case "thought": {
      const d = h("details", { class: "thought" }, `<summary>Thinking</summary><div class="md">${md(item.text)}</div>`);
      return d;
    }
    case "notice":
      return h("div", { class: `notice ${item.severity}` },
        item.detail ? `<span class="notice-title">${esc(item.text)}</span> <span class="notice-detail">${esc(item.detail)}</span>` : esc(item.text));
    case "compaction": {
      const status = COMPACTION_WORDS[item.status] ?? item.status;
      const d = h("details", { class: `compaction status-${item.status}` },
        `<summary>Context compacted <span class="badge">${esc(status)}</span></summary>`);
      if (item.error) d.appendChild(h("div", { class: "compaction-error" }, esc(item.error)));
      d.appendChild(item.summary ? h("div", { class: "md" }, md(item.summary)) : h("div", { class: "muted" }, item.status === "in_progress" ? "Summarising…" : "No summary."));
      return d;
    }
    case "plan": {
      const el = h("div", { class: "plan" }, "<div class='plan-head'>Plan</div>");
      const ul = h("ul");
      for (const e of m.chat.plan) ul.appendChild(h("li", { class: `plan-${e.status}` }, `${e.status === "completed" ? "☑" : e.status === "in_progress" ? "◐" : "☐"} ${esc(e.content)}`));
      el.appendChild(ul);
      return el;
    }
    case "tool": {
      const t = m.chat.toolCalls[item.toolCallId];
      return t ? renderTool(m, t) : h("div");
    }
    case "changes":
      return renderChanges(item);
    case "usage":
      return h("div", { class: "turn-usage", title: "This turn's tokens and cost" }, esc(turnUsageText(item)));
    case "permission": {
      const p = m.chat.permissions[item.requestId]!;
      const el = h("div", { class: "perm" }, `<div>Allow <b>${esc(p.toolCall.title ?? "this tool call")}</b>?</div>`);
      const tc = p.toolCall.toolCallId ? m.chat.toolCalls[p.toolCall.toolCallId] : undefined;
      if (p.outcome === undefined) tc?.content.forEach((c, index) => {
        if (c.type === "diff") el.appendChild(renderInlineDiff(tc.toolCallId, index, c));
      });
      if (p.outcome === undefined) {
        const row = h("div", { class: "perm-buttons" });
        for (const o of p.options) {
          const b = h("button", { class: o.kind.startsWith("allow") ? "allow" : "reject", title: o.kind }, esc(o.name));
          b.addEventListener("click", () => post({ type: "permission", requestId: p.requestId, optionId: o.optionId }));
          row.appendChild(b);
        }
        el.appendChild(row);
      } else {
        const chosen = p.options.find((o) => o.optionId === p.outcome);
        el.appendChild(h("div", { class: "muted" }, esc(chosen ? chosen.name : "Cancelled")));
      }
      return el;
    }
  }
}

function render(m: ViewModel) {
  model = m;
  renderBar(m);
  renderSessions(m);
  errorEl.hidden = !m.error;
  errorEl.textContent = m.error ?? "";
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const ids = new Set(m.chat.items.map((i) => i.id));
  for (const id of [...itemCache.keys()]) if (!ids.has(id)) itemCache.delete(id);
  const els: HTMLElement[] = [];
  for (const item of m.chat.items) {
    const cached = itemCache.get(item.id);
    // terminal output changes without a new rev: always re-render tool items that show a terminal
    const live = item.kind === "tool" && m.chat.toolCalls[item.toolCallId]?.content.some((c) => c.type === "terminal");
    if (cached && cached.rev === item.rev && !live) {
      els.push(cached.el);
      continue;
    }
    const el = renderItem(m, item);
    if (cached && cached.el.tagName === "DETAILS" && el.tagName === "DETAILS") (el as HTMLDetailsElement).open = (cached.el as HTMLDetailsElement).open;
    itemCache.set(item.id, { rev: item.rev, el });
    els.push(el);
  }
  log.replaceChildren(...els);
  if (!m.chat.items.length) log.innerHTML = `<div class="empty">${m.running ? "Ask anything. Type / for commands." : "OpenVaala starts when you send your first message."}</div>`;
  if (atBottom) log.scrollTop = log.scrollHeight;
  stopBtn.hidden = !m.chat.busy;
  // during a turn Send queues the message; it goes when the turn ends
  sendBtn.textContent = m.chat.busy ? "Queue" : "Send";
  sendBtn.title = m.chat.busy ? "Queue the message: it is sent when the turn ends" : "Send (Enter)";
  renderQueue(m);
  statusEl.textContent = m.chat.busy ? "Working…" : "";
  if (suggestions.length || slashQuery(input.value) !== undefined) updateCompletion();
}

window.addEventListener("message", (e: MessageEvent<ToWebview>) => {
  if (e.data.type === "state") render(e.data.model);
  else if (e.data.type === "persist") vscode.setState(e.data.state);
  else if (e.data.type === "focusInput") input.focus();
  else if (e.data.type === "restoreInput") {
    // never overwrites what is being typed: a message handed back goes before it
    const typed = input.value.trim();
    input.value = typed ? `${e.data.text}\n${input.value}` : e.data.text;
    for (const a of e.data.attachments ?? []) addAttachment(a);
    input.focus();
  } else if (e.data.type === "attach") {
    // the `@` that opened the picker gives way to the chip
    if (atPos !== undefined && input.value[atPos] === "@") input.value = input.value.slice(0, atPos) + input.value.slice(atPos + 1);
    const caret = atPos ?? input.value.length;
    atPos = undefined;
    addAttachment(e.data.attachment);
    input.focus();
    input.setSelectionRange(caret, caret);
  }
});
post({ type: "ready" });
