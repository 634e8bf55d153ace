// The chat webview (src/webview/main.ts) in happy-dom: what the user sees for a view model, and
// what the webview posts to the extension host for each click and key. Each test loads a fresh
// copy of the script into a fresh window.
import { test, afterEach } from "node:test";
import assert from "node:assert/strict";
import { Window } from "happy-dom";
import { initialChatState, reduce, type ChatEvent, type ChatState } from "../src/core/chatState.js";
import type { FromWebview, ViewModel } from "../src/core/webviewProtocol.js";

type El = HTMLElement & { [k: string]: any };
let loaded = 0;
let current: Window | undefined;

interface Webview {
  win: Window;
  posted: FromWebview[];
  /** what the webview gave VS Code to keep (setState), oldest first */
  saved: unknown[];
  $(sel: string): El;
  $$(sel: string): El[];
  show(m: Partial<ViewModel> & { chat?: ChatState }): void;
  input: HTMLTextAreaElement;
  type(text: string): void;
  key(key: string, opts?: { shiftKey?: boolean }): boolean;
  change(el: El, value?: string): void;
}

async function loadWebview(): Promise<Webview> {
  const win = new Window({ url: "https://webview.test/" });
  current = win;
  const g = globalThis as Record<string, unknown>;
  g.window = win;
  g.document = win.document;
  g.FileReader = win.FileReader;
  const posted: FromWebview[] = [];
  const saved: unknown[] = [];
  g.acquireVsCodeApi = () => ({ postMessage: (m: FromWebview) => posted.push(m), getState: () => saved.at(-1), setState: (st: unknown) => saved.push(st) });
  win.document.body.innerHTML = '<div id="app"></div>';
  await import(`../src/webview/main.js?copy=${++loaded}`);
  const doc = win.document as unknown as Document;
  const $ = (sel: string) => doc.querySelector(sel) as El;
  const input = $("#input") as unknown as HTMLTextAreaElement;
  return {
    win,
    posted,
    saved,
    $,
    $$: (sel) => Array.from(doc.querySelectorAll(sel)) as El[],
    show(m) {
      const model: ViewModel = { folders: [{ uri: "file:///w", name: "w" }], currentFolder: "file:///w", running: true, supportsSessionList: false, sessions: [], chat: initialChatState(), terminals: [], queue: [], inTab: false, ...m };
      win.dispatchEvent(new win.MessageEvent("message", { data: { type: "state", model } }));
    },
    input,
    type(text) {
      input.value = text;
      input.setSelectionRange(text.length, text.length);
      input.dispatchEvent(new win.Event("input") as unknown as Event);
    },
    key(key, opts = {}) {
      const e = new win.KeyboardEvent("keydown", { key, shiftKey: !!opts.shiftKey, cancelable: true, bubbles: true });
      input.dispatchEvent(e as unknown as Event);
      return e.defaultPrevented;
    },
    change(el, value) {
      if (value !== undefined) el.value = value;
      el.dispatchEvent(new win.Event("change") as unknown as Event);
    },
  };
}

afterEach(async () => {
  await current?.happyDOM.close();
  current = undefined;
});

const chat = (...events: ChatEvent[]) => events.reduce(reduce, initialChatState());
const text = (el: Element | null | undefined) => (el?.textContent ?? "").replace(/\s+/g, " ").trim();

test("the webview says it is ready, and an empty chat says how to start", async () => {
  const w = await loadWebview();
  assert.deepEqual(w.posted, [{ type: "ready" }], "the webview asks for the state when it loads");
  w.show({ running: false });
  assert.equal(text(w.$("#log")), "OpenVaala starts when you send your first message.", "an empty chat before the server runs says it starts on the first message");
  w.show({ running: true });
  assert.equal(text(w.$("#log")), "Ask anything. Type / for commands.", "an empty chat with a running server invites a question");
  assert.equal(w.$("#error").hidden, true, "no error shown without one");
  w.show({ error: "prompt: the server is gone" });
  assert.equal(w.$("#error").hidden, false, "an error is shown");
  assert.equal(w.$("#error").textContent, "prompt: the server is gone", "with its text");
});

test("sending: Enter or Send posts the trimmed text and clears the input, during a turn too; Shift+Enter and blank text do not", async () => {
  const w = await loadWebview();
  w.show({});
  w.posted.length = 0;
  w.type("  hello  ");
  assert.equal(w.key("Enter"), true, "Enter is taken by the webview");
  assert.deepEqual(w.posted, [{ type: "send", text: "hello" }], "Enter sends the trimmed text");
  assert.equal(w.input.value, "", "the input is cleared after sending");
  w.type("line one");
  assert.equal(w.key("Enter", { shiftKey: true }), false, "Shift+Enter is left to the textarea (new line)");
  assert.equal(w.posted.length, 1, "Shift+Enter does not send");
  w.$("#send").click();
  assert.deepEqual(w.posted[1], { type: "send", text: "line one" }, "the Send button sends");
  w.type("   ");
  w.$("#send").click();
  assert.equal(w.posted.length, 2, "blank text is not sent");
  w.key("a");
  assert.equal(w.posted.length, 2, "other keys do not send");

  w.show({ chat: chat({ type: "turnStarted" }) });
  w.type("while busy");
  w.key("Enter");
  assert.deepEqual(w.posted[2], { type: "send", text: "while busy" }, "a message typed while a turn runs goes to the host (which queues it)");
  assert.equal(w.input.value, "", "and leaves the input");
  w.posted.splice(2, 1);
  assert.equal(w.$("#stop").hidden, false, "Stop is shown while a turn runs");
  assert.equal(w.$("#send").textContent, "Queue", "Send says it queues while a turn runs");
  assert.equal(w.$("#status").textContent, "Working…", "the status says the agent is working");
  w.$("#stop").click();
  assert.deepEqual(w.posted[2], { type: "stop" }, "Stop posts stop");

  w.show({ chat: chat({ type: "update", update: { sessionUpdate: "usage_update", used: 1200, size: 200000 } }) });
  assert.equal(w.$("#stop").hidden, true, "Stop is hidden when idle");
  assert.equal(w.$("#send").textContent, "Send", "Send sends when idle");
  assert.equal(w.$("#status").textContent, "", "no status when idle (the usage is in the header)");
});

test("usage: the header shows the context and the session's cost; each turn its tokens and cost", async () => {
  const w = await loadWebview();
  w.show({});
  assert.equal(w.$("#bar .usage"), null, "nothing known: no usage in the header");
  const usage = (used: number, amount: number): ChatEvent => ({ type: "update", update: { sessionUpdate: "usage_update", used, size: 200_000, cost: { amount, currency: "USD" } } });
  const state = chat(
    { type: "userPrompt", text: "one" },
    { type: "turnStarted" },
    usage(5000, 0.0061),
    { type: "turnEnded", stopReason: "end_turn", usage: { inputTokens: 4900, outputTokens: 100, totalTokens: 5000 } },
    { type: "userPrompt", text: "two" },
    { type: "turnStarted" },
    usage(12_345, 1.7999999999999998),
    { type: "turnEnded", stopReason: "end_turn", usage: { inputTokens: 12_000, outputTokens: 345, totalTokens: 12_345 } },
  );
  w.show({ chat: state });
  const head = w.$("#bar .usage");
  assert.equal(text(head), "12.3k / 200k tokens · $1.80 this session", "context used of the window, and the session's cost to the cent");
  assert.match(head.getAttribute("title")!, /^Context: 12,345 tokens of 200,000 \(6 %\)\nTurns in this chat: 16,900 tokens in, 445 out\nCost this session: \$1\.80\nLast turn: 12\.3k tokens \(12k in, 345 out\) · \$1\.79$/, "the tooltip has the figures in full and the last turn");
  assert.deepEqual(w.$$("#log .turn-usage").map(text), ["5k tokens (4.9k in, 100 out) · $0.0061", "12.3k tokens (12k in, 345 out) · $1.79"], "each turn its tokens and what it cost");
});

test("messages: the user's text as typed, the agent's Markdown rendered, raw HTML never rendered", async () => {
  const w = await loadWebview();
  w.show({
    chat: chat(
      { type: "userPrompt", text: "<b>not bold</b> & more" },
      { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "*hmm*" } } },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Use **bold** and <img src=x onerror=alert(1)> `code`" } } },
      { type: "notice", severity: "warning", text: "<i>careful</i>" },
      { type: "update", update: { sessionUpdate: "notice", severity: "error", title: "MCP server `x` could not start", description: "stdio: <no such file>" } },
      { type: "update", update: { sessionUpdate: "compaction_update", compactionId: "c1", status: "completed", summary: [{ type: "text", text: "They asked about **pears**." }] } },
    ),
  });
  const user = w.$(".msg.user");
  assert.equal(user.querySelector("pre")?.textContent, "<b>not bold</b> & more", "the user's message shows as typed, HTML and all");
  assert.equal(user.querySelector("b"), null, "the user's HTML is not rendered");
  const agent = w.$(".msg.agent");
  assert.equal(agent.querySelector("strong")?.textContent, "bold", "the agent's Markdown is rendered");
  assert.equal(agent.querySelector("code")?.textContent, "code");
  assert.equal(agent.querySelector("img"), null, "raw HTML from the agent is not rendered");
  assert.match(agent.textContent ?? "", /<img src=x onerror=alert\(1\)>/, "raw HTML from the agent shows as text");
  const thought = w.$("details.thought");
  assert.equal(thought.querySelector("summary")?.textContent, "Thinking", "thoughts are folded under 'Thinking'");
  assert.equal(thought.querySelector(".md em")?.textContent, "hmm", "thoughts are Markdown too");
  const notice = w.$(".notice");
  assert.ok(notice.classList.contains("warning"), "a notice carries its severity");
  assert.equal(notice.textContent, "<i>careful</i>", "a notice is plain text");
  const server = w.$(".notice.error");
  assert.equal(server.querySelector(".notice-title")?.textContent, "MCP server `x` could not start", "a server notice shows its title");
  assert.equal(server.querySelector(".notice-detail")?.textContent, "stdio: <no such file>", "and its description, as plain text");
  const compaction = w.$("details.compaction");
  assert.match(compaction.querySelector("summary")?.textContent ?? "", /^Context compacted.*done/, "a compaction is a folded 'Context compacted' item with its status");
  assert.equal(compaction.querySelector(".md strong")?.textContent, "pears", "its summary is Markdown");
});

test("the plan shows each entry with its status", async () => {
  const w = await loadWebview();
  w.show({
    chat: chat({
      type: "update",
      update: {
        sessionUpdate: "plan",
        entries: [
          { content: "read <code>", priority: "high", status: "completed" },
          { content: "edit", priority: "high", status: "in_progress" },
          { content: "test", priority: "low", status: "pending" },
        ],
      },
    }),
  });
  assert.equal(text(w.$(".plan .plan-head")), "Plan");
  assert.deepEqual(w.$$(".plan li").map((li) => [li.className, li.textContent]), [
    ["plan-completed", "☑ read <code>"],
    ["plan-in_progress", "◐ edit"],
    ["plan-pending", "☐ test"],
  ], "plan entries show a box per status and their text");
});

test("tool calls: title, kind and status; locations, diffs and terminals are clickable", async () => {
  const w = await loadWebview();
  const s = chat(
    {
      type: "update",
      update: {
        sessionUpdate: "tool_call",
        toolCallId: "t1",
        title: "Edit <a.txt>",
        kind: "edit",
        status: "in_progress",
        locations: [{ path: "/w/a.txt", line: 3 }, { path: "/w/b.txt" }],
        content: [
          { type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" },
          { type: "content", content: { type: "text", text: "done **well**" } },
          { type: "terminal", terminalId: "term-1" },
          { type: "terminal", terminalId: "term-gone" },
        ],
      },
    },
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t2", title: "", kind: "execute", status: "completed" } },
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t3", title: "Odd", kind: "weird" as never, status: "failed" } },
  );
  w.show({ chat: s, terminals: [{ id: "term-1", command: "ls", output: "a.txt\n<b>", truncated: true, exitStatus: null }] });
  const [t1, t2, t3] = w.$$(".tool");
  assert.ok(t1!.classList.contains("status-in_progress"), "a tool call carries its status");
  assert.equal(text(t1!.querySelector(".tool-head")), "✏️ Edit <a.txt> edit in progress", "the head shows icon, title, kind and status");
  assert.equal(text(t2!.querySelector(".tool-head")), "▶ execute execute completed", "a tool call without a title shows its kind");
  assert.equal(text(t3!.querySelector(".tool-head")), "🔧 Odd weird failed", "an unknown kind gets the generic icon");
  const links = Array.from(t1!.querySelectorAll(".locs a")) as El[];
  assert.deepEqual(links.map((a) => a.textContent), ["/w/a.txt:3", "/w/b.txt"], "locations show path and line");
  w.posted.length = 0;
  links[0]!.click();
  links[1]!.click();
  assert.deepEqual(w.posted, [{ type: "openLocation", path: "/w/a.txt", line: 3 }, { type: "openLocation", path: "/w/b.txt", line: null }], "a location opens the file at the line");
  assert.equal(t2!.querySelector(".locs"), null, "no location list without locations");
  const diff = t1!.querySelector(".diff") as El;
  assert.equal(diff.querySelector("span")?.textContent, "/w/a.txt", "a diff names its file");
  w.posted.length = 0;
  (diff.querySelector("button") as El).click();
  assert.deepEqual(w.posted, [{ type: "openDiff", toolCallId: "t1", index: 0 }], "Open diff posts which diff");
  assert.equal(t1!.querySelector(".tool-out strong")?.textContent, "well", "text content is rendered as Markdown");
  const [term, gone] = Array.from(t1!.querySelectorAll(".term")) as El[];
  assert.equal(term!.querySelector("pre")?.textContent, "…a.txt\n<b>", "a terminal shows its output, marked when cut");
  w.posted.length = 0;
  (term!.querySelector("button") as El).click();
  assert.deepEqual(w.posted, [{ type: "showTerminal", terminalId: "term-1" }], "Show in terminal posts the terminal");
  assert.equal(gone!.querySelector("pre")?.textContent, "(no output recorded)", "a terminal this window never saw says it has no output");
  assert.equal(gone!.querySelector("button"), null, "a terminal this window never saw cannot be shown");
  w.show({ chat: s, terminals: [{ id: "term-1", command: "ls", output: "more", truncated: false, exitStatus: null }] });
  assert.equal(w.$(".term pre").textContent, "more", "terminal output is refreshed on every state, and not marked when whole");
});

test("permission prompts: a button per option posts the choice; once answered, the answer is shown", async () => {
  const w = await loadWebview();
  const request = {
    sessionId: "s",
    toolCall: { toolCallId: "t1", title: "Run <rm>" },
    options: [
      { optionId: "o1", name: "Allow once", kind: "allow_once" as const },
      { optionId: "o2", name: "Always allow", kind: "allow_always" as const },
      { optionId: "o3", name: "Reject", kind: "reject_once" as const },
    ],
  };
  let s = chat({ type: "permissionRequested", requestId: "r1", request }, { type: "permissionRequested", requestId: "r2", request: { ...request, toolCall: { toolCallId: "t2" } } });
  w.show({ chat: s });
  const [p1, p2] = w.$$(".perm");
  assert.equal(p1!.querySelector("b")?.textContent, "Run <rm>", "the prompt names the tool call");
  assert.equal(p2!.querySelector("b")?.textContent, "this tool call", "a tool call without a title is 'this tool call'");
  const buttons = Array.from(p1!.querySelectorAll("button")) as El[];
  assert.deepEqual(buttons.map((b) => [b.textContent, b.className, b.title]), [["Allow once", "allow", "allow_once"], ["Always allow", "allow", "allow_always"], ["Reject", "reject", "reject_once"]], "one button per option, allow and reject styled apart");
  w.posted.length = 0;
  buttons[2]!.click();
  assert.deepEqual(w.posted, [{ type: "permission", requestId: "r1", optionId: "o3" }], "a click posts the chosen option of that prompt");
  s = reduce(reduce(s, { type: "permissionResolved", requestId: "r1", outcome: "o2" }), { type: "permissionResolved", requestId: "r2", outcome: "cancelled" });
  w.show({ chat: s });
  const [a1, a2] = w.$$(".perm");
  assert.equal(a1!.querySelector("button"), null, "an answered prompt has no buttons");
  assert.equal(a1!.querySelector(".muted")?.textContent, "Always allow", "an answered prompt shows the answer");
  assert.equal(a2!.querySelector(".muted")?.textContent, "Cancelled", "a cancelled prompt says so");
});

test("the bar: folders, modes and options post the user's choice; New posts newChat", async () => {
  const w = await loadWebview();
  const modes = { currentModeId: "edit", availableModes: [{ id: "ask", name: "Ask", description: "asks first" }, { id: "edit", name: "Accept <edits>" }] };
  const configOptions = [
    { id: "thinking", name: "Thinking", type: "boolean", currentValue: true, description: "think harder" },
    {
      id: "model",
      name: "Model",
      type: "select",
      currentValue: "m2",
      description: "which model",
      options: [{ value: "m1", name: "One" }, { group: "g", name: "Fast ones", options: [{ value: "m2", name: "Two" }, { value: "m3", name: "Three" }] }],
    },
    { id: "other", name: "Other", type: "text", currentValue: "x" },
  ] as never;
  w.show({
    folders: [{ uri: "file:///a", name: "a<1>" }, { uri: "file:///b", name: "b" }],
    currentFolder: "file:///b",
    chat: chat({ type: "sessionStarted", sessionId: "s", modes, configOptions }),
  });
  const [folderSel, modeSel, modelSel] = w.$$("#bar select");
  assert.equal(folderSel!.title, "Workspace folder");
  assert.deepEqual(Array.from(folderSel!.querySelectorAll("option")).map((o: any) => [o.value, o.textContent, o.selected]), [["file:///a", "a<1>", false], ["file:///b", "b", true]], "the folder picker lists the folders, the current one selected");
  w.posted.length = 0;
  w.change(folderSel!, "file:///a");
  assert.deepEqual(w.posted, [{ type: "selectFolder", uri: "file:///a" }], "picking a folder posts it");

  assert.equal(modeSel!.title, "Mode");
  assert.deepEqual(Array.from(modeSel!.querySelectorAll("option")).map((o: any) => [o.value, o.textContent, o.title, o.selected]), [["ask", "Ask", "asks first", false], ["edit", "Accept <edits>", "", true]], "the mode picker lists the modes, the current one selected");
  w.posted.length = 0;
  w.change(modeSel!, "ask");
  assert.deepEqual(w.posted, [{ type: "setMode", modeId: "ask" }], "picking a mode posts it");

  const cb = w.$("#bar label input") as El;
  assert.equal(text(w.$("#bar label")), "Thinking", "a boolean option is a labelled checkbox");
  assert.equal(w.$("#bar label").title, "think harder");
  assert.equal(cb.checked, true, "the checkbox shows the current value");
  w.posted.length = 0;
  cb.checked = false;
  w.change(cb);
  assert.deepEqual(w.posted, [{ type: "setConfig", configId: "thinking", value: false }], "toggling posts the new value");

  assert.equal(modelSel!.title, "Model: which model", "a select option is titled with its name and description");
  assert.equal(modelSel!.querySelector("optgroup")?.getAttribute("label"), "Fast ones", "grouped values are in an optgroup");
  assert.deepEqual(Array.from(modelSel!.querySelectorAll("option")).map((o: any) => [o.value, o.textContent, o.selected]), [["m1", "One", false], ["m2", "Two", true], ["m3", "Three", false]], "all values are listed, the current one selected");
  w.posted.length = 0;
  w.change(modelSel!, "m3");
  assert.deepEqual(w.posted, [{ type: "setConfig", configId: "model", value: "m3" }], "picking a value posts it");
  assert.equal(w.$$("#bar select").length, 3, "an option of another type gets no control");

  w.posted.length = 0;
  const newBtn = w.$$("#bar button").find((b) => b.textContent === "New")!;
  assert.equal(newBtn.title, "New chat");
  newBtn.click();
  assert.deepEqual(w.posted, [{ type: "newChat" }], "New posts newChat");

  w.show({ chat: chat({ type: "sessionStarted", sessionId: "s", modes: { currentModeId: "a", availableModes: [] }, configOptions: [{ id: "m", name: "M", type: "select", currentValue: "x", options: [{ value: "x", name: "X" }] }] as never }) });
  assert.equal(w.$$("#bar select").length, 1, "one folder: no folder picker; no modes: no mode picker");
  assert.equal(w.$("#bar select").title, "M", "an option without a description is titled with its name");
});

test("session history: shown only when the server lists sessions; a click loads one", async () => {
  const w = await loadWebview();
  w.show({});
  assert.equal(w.$$("#bar button").some((b) => b.textContent === "History"), false, "no History button without session listing");
  const sessions = [
    { sessionId: "s-1", cwd: "/w", title: "Fix <parser>", updatedAt: new Date(Date.now() - 5 * 60_000).toISOString() },
    { sessionId: "s-2", cwd: "/w", title: "Older", updatedAt: "2020-01-02T10:00:00Z" },
    { sessionId: "s-empty", cwd: "/w", updatedAt: new Date().toISOString() },
  ];
  w.show({ supportsSessionList: true, sessions: [] });
  const history = () => w.$$("#bar button").find((b) => b.textContent === "History")!;
  assert.equal(history().title, "Previous sessions");
  assert.equal(w.$("#sessions").hidden, true, "the history starts closed");
  w.posted.length = 0;
  history().click();
  assert.deepEqual(w.posted, [{ type: "listSessions" }], "opening the history asks for the list");
  assert.equal(w.$("#sessions").hidden, false, "the history opens");
  assert.equal(text(w.$("#sessions")), "No previous sessions.", "an empty history says so");
  w.show({ supportsSessionList: true, sessions });
  const rows = w.$$("#sessions .session");
  assert.equal(rows.length, 2, "a session nobody wrote in (no title) is not listed");
  assert.equal(text(rows[0]!.querySelector(".session-title")), "Fix <parser> 5 min ago", "the newest first, by title, with a readable time");
  assert.match(text(rows[1]), /^Older \S.*2020/, "an old session shows its date, not a raw timestamp");
  assert.ok(!rows.some((r) => /T\d\d:\d\d|s-\d/.test(text(r))), "no raw ids or ISO timestamps");
  w.posted.length = 0;
  rows[1]!.click();
  assert.deepEqual(w.posted, [{ type: "loadSession", sessionId: "s-2" }], "a click loads that session");
  assert.equal(w.$("#sessions").hidden, true, "and closes the history");
  w.show({ supportsSessionList: true, sessions });
  assert.equal(w.$("#sessions").hidden, true, "the history stays closed on the next state");
  history().click();
  w.posted.length = 0;
  history().click();
  assert.deepEqual(w.posted, [], "closing the history asks for nothing");
  assert.equal(w.$("#sessions").hidden, true, "a second click closes it");
});

test("slash commands: typing / offers the agent's commands; arrows, Tab, Enter and a click pick one", async () => {
  const w = await loadWebview();
  const commands = [
    { name: "review", description: "Review <changes>", input: { hint: "focus" } },
    { name: "plan", description: "Write a plan" },
    { name: "pr-review", description: "Review a PR" },
  ];
  w.show({ chat: chat({ type: "update", update: { sessionUpdate: "available_commands_update", availableCommands: commands } }) });
  const box = w.$("#completion");
  assert.equal(box.hidden, true, "no completion before typing");
  w.type("/");
  assert.equal(box.hidden, false, "typing / opens the completion");
  assert.deepEqual(w.$$("#completion .sugg .name").map((e) => e.textContent), ["/plan", "/review", "/pr-review"], "every command is offered");
  w.type("/rev");
  const rows = () => w.$$("#completion .sugg");
  assert.deepEqual(rows().map((r) => r.querySelector(".name")?.textContent), ["/review", "/pr-review"], "the list follows what is typed");
  assert.equal(rows()[0]!.querySelector(".hint")?.textContent, "focus", "a command's input hint is shown");
  assert.equal(rows()[1]!.querySelector(".hint"), null, "no hint element without a hint");
  assert.equal(rows()[0]!.querySelector(".desc")?.textContent, "Review <changes>", "the description is shown as text");
  assert.ok(rows()[0]!.classList.contains("sel"), "the first suggestion is selected");
  assert.equal(w.key("ArrowDown"), true, "ArrowDown is taken by the completion");
  assert.ok(rows()[1]!.classList.contains("sel") && !rows()[0]!.classList.contains("sel"), "ArrowDown selects the next suggestion");
  w.key("ArrowDown");
  assert.ok(rows()[0]!.classList.contains("sel"), "ArrowDown wraps around");
  assert.equal(w.key("ArrowUp"), true, "ArrowUp is taken by the completion");
  assert.ok(rows()[1]!.classList.contains("sel"), "ArrowUp wraps around backwards");
  w.key("ArrowUp");
  assert.ok(rows()[0]!.classList.contains("sel"), "ArrowUp selects the previous suggestion");
  w.key("ArrowDown");
  assert.equal(w.key("Tab"), true, "Tab is taken by the completion");
  assert.equal(w.input.value, "/pr-review ", "Tab puts the selected command in the input");
  assert.equal(box.hidden, true, "and closes the completion");
  assert.equal(w.input.selectionStart, w.input.value.length, "the cursor goes to the end");

  w.posted.length = 0;
  w.type("/pl");
  assert.equal(w.key("Enter"), true);
  assert.equal(w.input.value, "/plan ", "Enter on a partly typed command completes it");
  assert.deepEqual(w.posted, [], "instead of sending");
  w.type("/plan now");
  w.key("Enter");
  assert.deepEqual(w.posted, [{ type: "send", text: "/plan now" }], "Enter on a complete command line sends it");
  w.posted.length = 0;
  w.type("/review");
  assert.equal(box.hidden, false, "a fully typed command still shows the completion");
  assert.equal(w.key("Enter"), true);
  assert.deepEqual(w.posted, [{ type: "send", text: "/review" }], "Enter on an exact command sends it (completing would add nothing)");
  assert.equal(w.input.value, "", "and clears the input");
  w.posted.length = 0;
  w.type("/review");
  w.key("ArrowDown");
  w.key("Enter");
  assert.equal(w.input.value, "/pr-review ", "Enter on another suggestion picked with the arrows completes it");
  assert.deepEqual(w.posted, [], "instead of sending");

  w.type("/re");
  w.key("Escape");
  assert.equal(box.hidden, true, "Escape closes the completion");
  w.key("ArrowDown");
  assert.equal(w.input.value, "/re", "arrows do nothing with the completion closed");

  w.type("/p extra words");
  w.input.setSelectionRange(2, 2);
  w.input.dispatchEvent(new w.win.Event("input") as unknown as Event);
  assert.equal(box.hidden, false, "the completion follows the cursor inside the command word");
  const plan = rows().find((r) => r.querySelector(".name")?.textContent === "/plan")!;
  const down = new w.win.MouseEvent("mousedown", { cancelable: true, bubbles: true });
  plan.dispatchEvent(down as unknown as Event);
  assert.equal(down.defaultPrevented, true, "a click on a suggestion keeps the focus in the input");
  assert.equal(w.input.value, "/plan extra words", "a click replaces only the command word");

  w.type("/zzz");
  assert.equal(box.hidden, true, "no matching command: no completion");
  w.type("hello /re");
  assert.equal(box.hidden, true, "a / inside the text is not a command");
});

test("the completion follows the agent's command list as it changes", async () => {
  const w = await loadWebview();
  w.show({});
  w.type("/pi");
  assert.equal(w.$("#completion").hidden, true, "no commands yet: no completion");
  w.show({ chat: chat({ type: "update", update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "ping", description: "p" }] } }) });
  assert.equal(w.$("#completion").hidden, false, "a new command list updates an open completion");
  assert.deepEqual(w.$$("#completion .name").map((e) => e.textContent), ["/ping"]);
});

test("rendering keeps what did not change: an opened thought stays open; removed items go", async () => {
  const w = await loadWebview();
  let s = chat(
    { type: "userPrompt", text: "q" },
    { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking" } } },
  );
  w.show({ chat: s });
  const user = w.$(".msg.user");
  const thought = w.$("details.thought") as HTMLDetailsElement;
  thought.open = true;
  s = reduce(s, { type: "update", update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: " more" } } });
  w.show({ chat: s });
  assert.equal(w.$(".msg.user"), user, "an unchanged message is not redrawn");
  const again = w.$("details.thought") as HTMLDetailsElement;
  assert.equal(again.querySelector(".md")?.textContent?.trim(), "thinking more", "a changed thought is redrawn");
  assert.equal(again.open, true, "an opened thought stays open when it grows");
  w.show({ chat: reduce(s, { type: "reset" }) });
  assert.equal(w.$$(".msg").length, 0, "a cleared chat shows no messages");
  w.show({ chat: s });
  assert.notEqual(w.$(".msg.user"), user, "an item that was removed is drawn anew when it comes back");
});

test("the extension host can focus the input", async () => {
  const w = await loadWebview();
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "focusInput" } }));
  assert.equal(w.win.document.activeElement, w.input as unknown, "focusInput puts the focus in the input");
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "other" } }));
});

test("a released terminal keeps its output; a replayed one shows the output its tool call reported", async () => {
  const w = await loadWebview();
  const s = chat(
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", kind: "execute", status: "completed", content: [{ type: "terminal", terminalId: "term-1" }] } },
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t2", title: "pwd", kind: "execute", status: "completed", content: [{ type: "terminal", terminalId: "term-old" }], rawOutput: { output: "/w\n" } } },
  );
  w.show({ chat: s, terminals: [{ id: "term-1", command: "ls", output: "a.txt\n", truncated: false, exitStatus: { exitCode: 0, signal: null }, released: true }] });
  const [live, replayed] = w.$$(".term pre");
  assert.equal(live!.textContent, "a.txt\n", "a released terminal's output stays displayed");
  assert.equal(replayed!.textContent, "/w\n", "a replayed command shows the output recorded in its tool call");
});

test("a permission prompt for an edit shows the proposed change line by line, with a button for the diff editor", async () => {
  const w = await loadWebview();
  const s = chat(
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit a.txt", kind: "edit", status: "pending" } },
    {
      type: "permissionRequested",
      requestId: "r1",
      request: { sessionId: "s", toolCall: { toolCallId: "t1", content: [{ type: "diff", path: "/w/a.txt", oldText: "one\ntwo\nthree\n", newText: "one\n2\nthree\n" }] }, options: [{ optionId: "a", name: "Allow", kind: "allow_once" }] },
    },
  );
  w.show({ chat: s });
  const perm = w.$(".perm");
  assert.deepEqual(Array.from(perm.querySelectorAll(".inline-diff pre div")).map((d) => (d as El).textContent), ["  one", "- two", "+ 2", "  three", "  "], "the prompt shows removed and added lines with context");
  assert.equal(text(perm.querySelector(".diff-path")), "/w/a.txt", "the prompt names the file");
  w.posted.length = 0;
  (perm.querySelector(".inline-diff button") as El).click();
  assert.deepEqual(w.posted, [{ type: "openDiff", toolCallId: "t1", index: 0 }], "the prompt opens the full diff");
});

test("the chat's stylesheet takes every colour from the VS Code theme (light and dark themes both stay readable)", async () => {
  const fs = await import("node:fs");
  const css = fs.readFileSync(new URL("../../media/chat.css", import.meta.url), "utf8");
  const fixed = css.match(/#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(|:\s*(black|white)\b/g) ?? [];
  assert.deepEqual(fixed, [], "no hard-coded colour, not even as a fallback of a theme variable");
});

test("a message handed back by the host fills an empty input, and never overwrites a new one", async () => {
  const w = await loadWebview();
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "restoreInput", text: "lost message" } }));
  assert.equal(w.input.value, "lost message", "the unsent message is back in the input");
  w.input.value = "typed since";
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "restoreInput", text: "lost message" } }));
  assert.equal(w.input.value, "lost message\ntyped since", "what the user typed since is kept, after the message handed back");
  w.input.value = "";
  const att = { kind: "file", id: "f1", path: "/w/a.txt", name: "a.txt" };
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "restoreInput", text: "with a file", attachments: [att] } }));
  assert.deepEqual(w.$$("#chips .chip").map((c) => c.getAttribute("title")), ["a.txt"], "its attachments come back as chips");
});

test("queued messages: shown with their attachments; Edit and × take them out, Send only when no turn runs", async () => {
  const w = await loadWebview();
  const queue = [{ id: "q1", text: "first <b>", attachments: ["a.txt"] }, { id: "q2", text: "second", attachments: [] }];
  w.show({ chat: chat({ type: "turnStarted" }), queue });
  assert.equal(w.$("#queue").hidden, false, "the queue is shown");
  const rows = w.$$("#queue .queued");
  assert.deepEqual(rows.map((r) => r.querySelector(".queued-text")?.textContent), ["first <b>", "second"], "each queued message as typed, in order");
  assert.equal(rows[0]!.querySelector(".chip")?.getAttribute("title"), "a.txt", "with its attachments");
  const buttons = (r: El) => Array.from(r.querySelectorAll("button")) as El[];
  assert.deepEqual(buttons(rows[0]!).map((b) => b.textContent), ["Edit", "×"], "no Send while a turn runs (it goes when the turn ends)");
  w.posted.length = 0;
  buttons(rows[0]!)[0]!.click();
  buttons(rows[1]!)[1]!.click();
  assert.deepEqual(w.posted, [{ type: "unqueue", id: "q1", edit: true }, { type: "unqueue", id: "q2" }], "Edit takes it back into the input, × removes it");
  w.show({ chat: chat(), queue: [queue[1]!] });
  const row = w.$$("#queue .queued")[0]!;
  assert.deepEqual(buttons(row).map((b) => b.textContent), ["Send", "Edit", "×"], "after Stop the queue stays, with Send");
  w.posted.length = 0;
  buttons(row)[0]!.click();
  assert.deepEqual(w.posted, [{ type: "sendQueued", id: "q2" }], "Send sends it now");
  w.show({ chat: chat(), queue: [] });
  assert.equal(w.$("#queue").hidden, true, "an empty queue is hidden");
});

test("attachments: @ at a word start opens the file picker; the picked file replaces the @ as a removable chip and goes with the message", async () => {
  const w = await loadWebview();
  w.show({});
  w.posted.length = 0;
  w.type("mail me@x");
  assert.deepEqual(w.posted, [], "an @ inside a word (an address) opens nothing");
  w.type("look at @");
  assert.deepEqual(w.posted, [{ type: "pickFile" }], "@ after a space opens the workspace file picker");
  const a = { kind: "file", id: "f1", path: "/w/src/a.ts", name: "src/a.ts" };
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "attach", attachment: a } }));
  assert.equal(w.input.value, "look at ", "the @ gives way to the chip");
  assert.deepEqual(w.$$("#chips .chip").map((c) => c.getAttribute("title")), ["src/a.ts"], "the file shows as a chip");
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "attach", attachment: { ...a, id: "f2" } } }));
  assert.equal(w.$$("#chips .chip").length, 1, "the same file is attached once");
  const b = { kind: "file", id: "f3", path: "/w/b.ts", name: "b.ts" };
  w.$("#attach").click();
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "attach", attachment: b } }));
  assert.equal(w.input.value, "look at ", "the Attach button's pick takes no character out of the input");
  (w.$$("#chips .chip")[0]!.querySelector(".chip-remove") as El).click();
  assert.deepEqual(w.$$("#chips .chip").map((c) => c.getAttribute("title")), ["b.ts"], "× removes a chip");
  w.posted.length = 0;
  w.key("Enter");
  assert.deepEqual(w.posted, [{ type: "send", text: "look at", attachments: [b] }], "the message goes with its attachments");
  assert.equal(w.$("#chips").hidden, true, "and the chips are cleared");
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "attach", attachment: b } }));
  w.posted.length = 0;
  w.key("Enter");
  assert.deepEqual(w.posted, [{ type: "send", text: "", attachments: [b] }], "attachments alone can be sent");
});

test("a sent message shows its attachments; History offers to open a session in a tab", async () => {
  const w = await loadWebview();
  w.show({ chat: chat({ type: "userPrompt", text: "see", attachments: ["a.txt", "pasted image 1"] }), supportsSessionList: true, sessions: [{ sessionId: "s1", cwd: "/w", title: "Old chat", updatedAt: new Date().toISOString() }] });
  assert.deepEqual(w.$$(".msg.user .chip").map((c) => c.getAttribute("title")), ["a.txt", "pasted image 1"], "the attachment names under the message");
  const history = w.$$("#bar button").find((b) => b.textContent === "History")!;
  history.click();
  w.posted.length = 0;
  (w.$("#sessions .session .open-tab") as El).click();
  assert.deepEqual(w.posted, [{ type: "openSessionInTab", sessionId: "s1" }], "Open in tab opens the session in an editor tab (not in this chat)");
});

test("code blocks are highlighted by language and have a Copy button that copies the code", async () => {
  const w = await loadWebview();
  const s = chat({ type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Run:\n\n```python\ndef f(x):\n    return \"<b>\" # hi\n```\n" } } });
  w.show({ chat: s });
  const code = w.$(".codeblock code");
  assert.ok(code.classList.contains("language-python"), "the block knows its language");
  assert.ok(code.querySelector(".hljs-keyword"), "keywords are marked for the theme's colours");
  assert.ok(code.querySelector(".hljs-string"), "strings too");
  assert.equal(code.querySelector("b"), null, "code stays text, never HTML");
  w.posted.length = 0;
  (w.$(".codeblock .copy") as El).click();
  assert.deepEqual(w.posted, [{ type: "copyText", text: 'def f(x):\n    return "<b>" # hi' }], "Copy sends the code as written");
  assert.equal(text(w.$(".codeblock .copy")), "Copied", "the button confirms");
});

test("one mode picker when the server sends both modes and a mode config option; mode and model pickers come first", async () => {
  const w = await loadWebview();
  const modes = { currentModeId: "default", availableModes: [{ id: "default", name: "Ask" }, { id: "full_auto", name: "Full auto" }] };
  const configOptions = [
    { id: "agent", name: "Agent", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] },
    { id: "llm", name: "Model", type: "select", category: "model", currentValue: "m1", options: [{ value: "m1", name: "Fast" }, { value: "m2", name: "Smart" }] },
    { id: "mode", name: "Mode", type: "select", category: "mode", currentValue: "default", options: [{ value: "default", name: "Ask" }, { value: "full_auto", name: "Full auto" }] },
  ] as never;
  w.show({ chat: chat({ type: "sessionStarted", sessionId: "s", modes, configOptions }) });
  const selects = w.$$("#bar select");
  assert.equal(selects.filter((s) => Array.from(s.querySelectorAll("option")).some((o: any) => o.textContent === "Full auto")).length, 1, "exactly one picker offers the modes");
  assert.deepEqual(selects.map((s) => s.getAttribute("data-option")), ["mode", "llm", "agent"], "mode, then model, then the rest");
  w.posted.length = 0;
  w.change(selects[0]!, "full_auto");
  w.change(selects[1]!, "m2");
  assert.deepEqual(w.posted, [{ type: "setConfig", configId: "mode", value: "full_auto" }, { type: "setConfig", configId: "llm", value: "m2" }], "the pickers set the config options (session/set_config_option)");
});

test("the executor picker: its own labelled picker when the server offers executors; a pick sets the option", async () => {
  const w = await loadWebview();
  const executor = {
    id: "executor",
    name: "Executor",
    description: "Where files are read and edited and commands run",
    type: "select",
    currentValue: "local",
    options: [{ value: "local", name: "local", description: "this machine" }, { value: "docs", name: "docs", description: "virtual: /notes" }, { value: "openvaala", name: "openvaala" }],
  };
  const mode = { id: "mode", name: "Mode", type: "select", category: "mode", currentValue: "default", options: [{ value: "default", name: "Ask" }] };
  w.show({ chat: chat({ type: "sessionStarted", sessionId: "s", configOptions: [executor, mode] as never }) });
  const picker = w.$$("#bar label.picker").find((l) => l.querySelector('select[data-option="executor"]'));
  assert.ok(picker, "the executor select sits in a label of its own");
  assert.equal(text(picker!.querySelector(".picker-name")), "Executor", "the picker is labelled with the option's name");
  const sel = picker!.querySelector("select") as El;
  assert.deepEqual(Array.from(sel.querySelectorAll("option")).map((o: any) => [o.value, o.selected, o.getAttribute("title")]), [["local", true, "this machine"], ["docs", false, "virtual: /notes"], ["openvaala", false, null]], "every executor is offered, the session's selected, each with its description");
  assert.equal(w.$('#bar select[data-option="mode"]').closest("label"), null, "the mode picker needs no label");
  w.posted.length = 0;
  w.change(sel, "docs");
  assert.deepEqual(w.posted, [{ type: "setConfig", configId: "executor", value: "docs" }], "picking an executor sets the session's executor option (session/set_config_option)");
  w.show({ chat: chat({ type: "sessionStarted", sessionId: "s", configOptions: [mode] as never }) });
  assert.equal(w.$('#bar select[data-option="executor"]'), null, "no executors declared: no executor picker");
});

test("a turn's changed files: each opens its diff, Undo posts the turn, and the outcome replaces the button", async () => {
  const w = await loadWebview();
  const s = chat(
    { type: "turnStarted" },
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit", kind: "edit", status: "completed", content: [{ type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" }, { type: "diff", path: "/w/new.txt", oldText: null, newText: "n" }] } },
    { type: "turnEnded", stopReason: "end_turn" },
  );
  w.show({ chat: s });
  const box = w.$(".changes");
  assert.equal(text(box.querySelector(".changes-head")), "Changed 2 files");
  const links = Array.from(box.querySelectorAll(".change a")) as El[];
  assert.deepEqual(links.map((a) => a.textContent), ["/w/a.txt", "/w/new.txt"]);
  assert.match(text(box.querySelectorAll(".change")[1] as El), /\(new\)/, "a created file is marked new");
  const itemId = s.items.find((i) => i.kind === "changes")!.id;
  w.posted.length = 0;
  links[0]!.click();
  (box.querySelector("button.undo") as El).click();
  assert.deepEqual(w.posted, [{ type: "openChangeDiff", itemId, path: "/w/a.txt" }, { type: "undoTurn", itemId }]);
  w.show({ chat: reduce(s, { type: "turnUndone", itemId, outcomes: [{ path: "/w/a.txt", result: "restored" }, { path: "/w/new.txt", result: "changed-since" }] }) });
  assert.equal(w.$(".changes button.undo"), null, "no second Undo");
  assert.match(text(w.$$(".change")[1]), /not restored: changed after the turn/, "a file edited since says why it was left alone");
});

test("the webview keeps what the extension hands it to outlive a window reload (setState)", async () => {
  const w = await loadWebview();
  assert.deepEqual(w.saved, [], "nothing is kept before the extension says so");
  const state = { folder: "file:///w", sessionId: "s1", queue: [{ text: "later", attachments: [] }] };
  w.win.dispatchEvent(new w.win.MessageEvent("message", { data: { type: "persist", state } }));
  assert.deepEqual(w.saved, [state], "the chat's folder, session and queue are kept as the webview's state");
  w.show({});
  assert.equal(w.saved.length, 1, "a redraw keeps nothing new");
});

test("a pasted image becomes a chip and goes with the message; a text paste is left to the input", async () => {
  const w = await loadWebview();
  w.show({});
  const png = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));
  const paste = (items: { kind: string; type: string; file?: unknown }[]) => {
    const e = new w.win.Event("paste", { bubbles: true, cancelable: true }) as unknown as Event & { clipboardData: unknown };
    Object.defineProperty(e, "clipboardData", { value: { items: items.map((i) => ({ kind: i.kind, type: i.type, getAsFile: () => i.file ?? null })) } });
    w.input.dispatchEvent(e);
    return e.defaultPrevented;
  };
  assert.equal(paste([{ kind: "string", type: "text/plain" }]), false, "a text paste is the input's own");
  assert.equal(paste([]), false, "an empty clipboard too");
  const F = w.win.File as unknown as typeof File;
  assert.equal(paste([{ kind: "file", type: "image/png", file: new F([png], "image.png", { type: "image/png" }) }, { kind: "file", type: "text/plain", file: new F(["x"], "a.txt") }, { kind: "file", type: "image/png" }]), true, "an image paste is taken over");
  paste([{ kind: "file", type: "image/png", file: new F([png], "diagram.png", { type: "image/png" }) }]);
  for (let i = 0; i < 100 && w.$$("#chips .chip").length < 2; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(w.$$("#chips .chip").map((c) => c.getAttribute("title")), ["pasted image 1", "diagram.png"], "a clipboard image is named by its number, a named file keeps its name; the text file and the empty item are left out");
  w.type("look");
  w.key("Enter");
  const sent = w.posted.find((m) => m.type === "send") as { attachments: { kind: string; mimeType: string; data: string; name: string }[] };
  assert.deepEqual(sent.attachments.map((a) => [a.kind, a.mimeType, a.name, a.data.slice(0, 5)]), [["image", "image/png", "pasted image 1", "iVBOR"], ["image", "image/png", "diagram.png", "iVBOR"]], "the images go with the message as base64 PNG");
});

test("an edit's inline diff: added, removed and context lines marked; a long one cut after 200 lines with the rest counted", async () => {
  const w = await loadWebview();
  const big = Array.from({ length: 250 }, (_, i) => `l${i}`).join("\n");
  const ask = (requestId: string, toolCallId: string, diff: unknown): ChatEvent => ({ type: "permissionRequested", requestId, request: { sessionId: "s", toolCall: { toolCallId, content: [diff] }, options: [{ optionId: "a", name: "Allow", kind: "allow_once" }] } } as ChatEvent);
  const s = chat(
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit", kind: "edit", status: "pending" } },
    ask("r1", "t1", { type: "diff", path: "/w/a.txt", oldText: "k1\nk2\nold\nk3", newText: "k1\nk2\nnew\nk3" }),
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t2", title: "Create", kind: "edit", status: "pending" } },
    ask("r2", "t2", { type: "diff", path: "/w/big.txt", oldText: null, newText: big }),
  );
  w.show({ chat: s });
  const [small, large] = w.$$(".inline-diff pre");
  assert.deepEqual(Array.from(small!.children).map((d: any) => [d.className, d.textContent]), [["ctx", "  k1"], ["ctx", "  k2"], ["del", "- old"], ["add", "+ new"], ["ctx", "  k3"]], "each line is marked by what happened to it");
  assert.equal(large!.children.length, 201, "200 lines and a count of the rest");
  assert.equal(large!.lastElementChild!.className, "ctx");
  assert.equal(text(large!.lastElementChild), "… 51 more lines", "the lines left out are counted (an empty old text is one removed empty line)");
});

test("a turn's changes: created files marked new, the heading counts the files, each undo outcome in words", async () => {
  const w = await loadWebview();
  let s = chat(
    { type: "turnStarted" },
    { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Edit", kind: "edit", status: "completed", content: [{ type: "diff", path: "/w/a.txt", oldText: "a", newText: "b" }, { type: "diff", path: "/w/n.txt", oldText: null, newText: "n" }, { type: "diff", path: "/w/c.txt", oldText: "c", newText: "d" }, { type: "diff", path: "/w/f.txt", oldText: "f", newText: "g" }] } },
    { type: "turnEnded", stopReason: "end_turn" },
  );
  w.show({ chat: s });
  assert.equal(text(w.$(".changes-head")), "Changed 4 files");
  assert.deepEqual(w.$$(".changes .change").map((r) => text(r)), ["/w/a.txt", "/w/n.txt (new)", "/w/c.txt", "/w/f.txt"], "a file the turn created says so");
  assert.equal(w.$(".changes .change a").getAttribute("title"), "Open the diff of this turn");
  const itemId = s.items.find((i) => i.kind === "changes")!.id;
  s = reduce(s, { type: "turnUndone", itemId, outcomes: [{ path: "/w/a.txt", result: "restored" }, { path: "/w/n.txt", result: "deleted" }, { path: "/w/c.txt", result: "changed-since" }, { path: "/w/f.txt", result: "failed", message: "EACCES" }] });
  w.show({ chat: s });
  assert.deepEqual(w.$$(".changes .change").map((r) => text(r)), ["/w/a.txt — restored", "/w/n.txt (new) — deleted (the turn created it)", "/w/c.txt — not restored: changed after the turn", "/w/f.txt — not restored: EACCES"], "each file says what Undo did to it");
  const one = chat({ type: "turnStarted" }, { type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "E", kind: "edit", status: "completed", content: [{ type: "diff", path: "/w/a", oldText: "a", newText: "b" }] } }, { type: "turnEnded", stopReason: "end_turn" });
  w.show({ chat: one });
  assert.equal(text(w.$(".changes-head")), "Changed 1 file", "one file, no plural");
});

test("the queue's buttons say what they do; a tool's locations and text output are shown", async () => {
  const w = await loadWebview();
  w.show({ queue: [{ id: "q1", text: "later <b>", attachments: ["a.txt"] }] });
  const row = w.$(".queued");
  assert.deepEqual(Array.from(row.querySelectorAll("button")).map((b: any) => [b.textContent, b.title]), [["Send", "Send this message now"], ["Edit", "Take it back into the input"], ["×", "Remove it from the queue"]]);
  assert.equal(text(row.querySelector(".queued-text")), "later <b>", "the text is shown as text");
  assert.deepEqual(Array.from(row.querySelectorAll(".chip")).map((c: any) => c.getAttribute("title")), ["a.txt"], "with its attachments");
  const s = chat({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "Search", kind: "search", status: "completed", locations: [{ path: "/w/a.ts", line: 7 }, { path: "/w/b.ts" }], content: [{ type: "content", content: { type: "text", text: "found **two**" } }] } });
  w.show({ chat: s });
  assert.deepEqual(w.$$(".locs a").map((a) => text(a)), ["/w/a.ts:7", "/w/b.ts"], "locations with their line");
  assert.equal(w.$(".tool-out.md strong")?.textContent, "two", "text output is rendered as markdown");
  assert.equal(text(w.$(".tool-head .icon")), "🔍", "the kind's icon");
});

test("each kind of tool call has its own icon; buttons say what they do", async () => {
  const w = await loadWebview();
  const kinds = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] as const;
  const s = chat(...kinds.map((kind): ChatEvent => ({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: kind, title: kind, kind, status: "completed" } })));
  w.show({ chat: s });
  assert.deepEqual(w.$$(".tool-head .icon").map((i) => text(i)), ["📖", "✏️", "🗑", "↔", "🔍", "▶", "💭", "🌐", "⇄", "🔧"], "read, edit, delete, move, search, execute, think, fetch, switch mode, other");
  const t = chat({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "x", title: "x", kind: "execute", status: "completed", content: [{ type: "diff", path: "/w/a", oldText: "a", newText: "b" }, { type: "terminal", terminalId: "term-1" }] } });
  w.show({ chat: t, terminals: [{ id: "term-1", command: "ls", output: "", truncated: false, exitStatus: null }] });
  assert.deepEqual(w.$$(".tool button").map((b) => text(b)), ["Open diff", "Show in terminal"]);
});

test("slash commands with three suggestions: ArrowUp goes to the previous one, from the first to the last", async () => {
  const w = await loadWebview();
  const availableCommands = [{ name: "a1", description: "" }, { name: "a2", description: "" }, { name: "a3", description: "" }];
  w.show({ chat: chat({ type: "update", update: { sessionUpdate: "available_commands_update", availableCommands } }) });
  w.type("/a");
  const sel = () => w.$$("#completion .sugg").findIndex((r) => r.classList.contains("sel"));
  w.key("ArrowUp");
  assert.equal(sel(), 2, "from the first to the last");
  w.key("ArrowUp");
  assert.equal(sel(), 1, "then the one before");
  w.key("Tab");
  assert.equal(w.input.value, "/a2 ");
});


test("a user message with an id offers Edit and resend and Restore files to here; one without offers neither", async () => {
  const w = await loadWebview();
  const s = chat({ type: "userPrompt", text: "first", messageId: "msg_1" }, { type: "userPrompt", text: "old, no id" });
  w.show({ chat: s });
  const users = w.$$(".msg.user");
  assert.equal(users[1]!.querySelector("button.edit-resend"), null, "a message the server cannot name has no buttons");
  w.posted.length = 0;
  (users[0]!.querySelector("button.edit-resend") as El).click();
  (users[0]!.querySelector("button.restore-files") as El).click();
  const itemId = s.items[0]!.id;
  assert.deepEqual(w.posted, [{ type: "editResend", itemId }, { type: "restoreFiles", itemId }]);
});
