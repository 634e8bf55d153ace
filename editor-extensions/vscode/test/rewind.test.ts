// Taking back a message from the chat (issue 36): every message sent carries an id; "Edit and
// resend" rewinds the session to before it and gives its text back; "Restore files to here" lists
// the files (a dry run) and restores them only once the list is confirmed.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { __test } from "./stubs/vscode.js";
import { ChatSession } from "../src/vscode/chatSession.js";
import { confirmRestore } from "../src/vscode/chatView.js";
import { FakeHost } from "./fakeAgent.js";

function setup() {
  const host = new FakeHost();
  return { host, conn: host.fake, chat: new ChatSession(host) };
}
const users = (c: ChatSession) => c.state.items.filter((i) => i.kind === "user") as { id: string; text: string; messageId?: string }[];
const notices = (c: ChatSession) => c.state.items.filter((i) => i.kind === "notice").map((i) => (i as { text: string }).text);

beforeEach(() => __test.reset());

test("each message is sent with its own id, kept on its item", async () => {
  const { chat, conn } = setup();
  await chat.prompt("first");
  await chat.prompt("second");
  const ids = users(chat).map((u) => u.messageId);
  assert.equal(ids.length, 2);
  assert.deepEqual(conn.messageIds, ids, "promise: the id sent with the prompt is the one the chat keeps");
  assert.notEqual(ids[0], ids[1]);
  assert.match(ids[0]!, /^msg_vsc_/);
});

test("Edit and resend rewinds the session to before the message, cuts the chat there and gives back its text", async () => {
  const { chat, conn } = setup();
  await chat.prompt("first");
  await chat.prompt("second");
  await chat.prompt("third");
  const second = users(chat)[1]!;
  const text = await chat.editAndResend(second.id);
  assert.equal(text, "second");
  assert.deepEqual(conn.of("rewind"), [["s1", second.messageId]], "promise: _session/rewind names the message's id");
  assert.deepEqual(users(chat).map((u) => u.text), ["first"], "the message and everything after it leave the chat");
});

test("Restore files to here: the dry run's list is confirmed first; declined, nothing is restored", async () => {
  const { chat, conn } = setup();
  await chat.prompt("change a");
  const item = users(chat)[0]!;
  conn.answers.rewindFiles = async (_id, _mid, dryRun) =>
    dryRun ? { files: [{ path: "/w/a.txt", action: "restore" }, { path: "/w/b.txt", action: "conflict" }] }
      : { files: [{ path: "/w/a.txt", action: "restore" }, { path: "/w/b.txt", action: "conflict" }] };
  let shown: unknown;
  assert.equal(await chat.restoreFilesTo(item.id, async (files) => ((shown = files), false)), undefined);
  assert.deepEqual(shown, [{ path: "/w/a.txt", action: "restore" }, { path: "/w/b.txt", action: "conflict" }], "promise: the user sees the list first");
  assert.deepEqual(conn.of("rewindFiles"), [["s1", item.messageId, true]], "promise: declined, only the dry run was sent");
  await chat.restoreFilesTo(item.id, async () => true);
  assert.deepEqual(conn.of("rewindFiles").at(-1), ["s1", item.messageId, false]);
  assert.match(notices(chat).at(-1)!, /Files restored: 1; left alone: \/w\/b\.txt \(conflict\)/);
});

test("nothing is taken back during a turn, nor when the agent changed no file", async () => {
  const { chat, conn } = setup();
  await chat.prompt("first");
  const item = users(chat)[0]!;
  chat.emit({ type: "turnStarted" });
  assert.equal(await chat.editAndResend(item.id), undefined);
  assert.equal(conn.of("rewind").length, 0, "promise: no rewind while a turn runs");
  assert.match(notices(chat).at(-1)!, /Stop the running turn first/);
  chat.emit({ type: "turnEnded", stopReason: "end_turn" });
  assert.equal(await chat.restoreFilesTo(item.id, async () => true), undefined);
  assert.deepEqual(conn.of("rewindFiles"), [["s1", item.messageId, true]], "no file: only the dry run");
  assert.match(notices(chat).at(-1)!, /No file to restore/);
});

test("the confirmation lists each file with what will be done, and only Restore agrees", async () => {
  __test.state.messageAnswers.push("Restore", undefined);
  assert.equal(await confirmRestore([{ path: "/w/a.txt", action: "restore" }, { path: "/w/n.txt", action: "delete" }]), true);
  assert.equal(await confirmRestore([{ path: "/w/a.txt", action: "restore" }]), false);
  const shown = __test.state.messages[0]!;
  assert.match(JSON.stringify(shown.items), /restore: \/w\/a\.txt\\ndelete: \/w\/n\.txt/);
  assert.match(shown.text, /Put these files back as they were before this message\?/, "the question says what Restore does");
  const [options, button] = shown.items as unknown as [{ modal: boolean }, string];
  assert.equal(options.modal, true, "a modal question: files are not put back by a stray click elsewhere");
  assert.equal(button, "Restore", "the one button that agrees is named Restore");
});

test("files on another executor are listed by executor and path there", async () => {
  __test.state.messageAnswers.push(undefined);
  assert.equal(await confirmRestore([{ path: "@devbox:/home/me/src/main.c", action: "restore" }]), false);
  assert.match(JSON.stringify(__test.state.messages[0]!.items), /restore: @devbox:\/home\/me\/src\/main\.c/);
});
