// What of a chat outlives a window reload (src/core/chatPersist.ts): what is kept, and what is
// taken back from a saved state that may be from an older run or version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parsePersistedChat, persistedChat, worthRestoring } from "../src/core/chatPersist.js";

const file = { kind: "file" as const, id: "f1", name: "a.txt", path: "/w/a.txt" };
const image = { kind: "image" as const, id: "i1", name: "pasted image 1", mimeType: "image/png", data: "iVBOR" };

test("kept: the folder, the session and each queued message with its attachments, nothing else", () => {
  assert.deepEqual(persistedChat("s1", [{ id: "q1", text: "one", attachments: [file, image] }, { id: "q2", text: "two", attachments: [] }], "file:///w"), {
    folder: "file:///w",
    sessionId: "s1",
    queue: [{ text: "one", attachments: [file, image] }, { text: "two", attachments: [] }],
  }, "queue ids are not kept (the restored queue numbers its own)");
  assert.deepEqual(persistedChat(undefined, []), { queue: [] }, "no session, no folder: only an empty queue");
  assert.deepEqual(persistedChat("", [], ""), { queue: [] }, "empty ids are not kept");
});

test("worth restoring: a session or a queued message; not an empty chat or nothing", () => {
  assert.equal(worthRestoring(undefined), false);
  assert.equal(worthRestoring({ folder: "file:///w", queue: [] }), false, "a folder alone brings nothing back");
  assert.equal(worthRestoring({ sessionId: "s", queue: [] }), true);
  assert.equal(worthRestoring({ queue: [{ text: "t", attachments: [] }] }), true);
});

test("a saved state round-trips", () => {
  const p = persistedChat("s1", [{ id: "q1", text: "one", attachments: [file, image] }], "file:///w");
  assert.deepEqual(parsePersistedChat(JSON.parse(JSON.stringify(p))), p);
});

test("what is not a chat is refused; a chat's bad parts are left out, the good ones kept", () => {
  for (const junk of [undefined, null, "s1", 3, true, [], [{ sessionId: "s" }]]) assert.equal(parsePersistedChat(junk), undefined, `${JSON.stringify(junk)} is not a chat`);
  assert.deepEqual(parsePersistedChat({}), { queue: [] }, "an object without fields is an empty chat");
  assert.deepEqual(parsePersistedChat({ folder: 7, sessionId: ["s"], queue: "x" }), { queue: [] }, "fields of the wrong type are dropped");
  assert.deepEqual(parsePersistedChat({ folder: "", sessionId: "", queue: [] }), { queue: [] }, "empty strings are no folder and no session");
  assert.deepEqual(
    parsePersistedChat({
      sessionId: "s2",
      queue: [
        null,
        "text",
        { text: 5 },
        { attachments: [] },
        { text: "no attachments" },
        { text: "attachments not a list", attachments: { kind: "file" } },
        {
          text: "mixed",
          attachments: [
            file,
            image,
            null,
            "a",
            { kind: "file", id: "f2", name: "n" },
            { kind: "file", id: "f3", path: "/p" },
            { kind: "file", name: "n", path: "/p" },
            { kind: "image", id: "i2", name: "n", data: "d" },
            { kind: "image", id: "i3", name: "n", mimeType: "image/png" },
            { kind: "video", id: "v", name: "n", path: "/p" },
            { kind: "video", id: "v2", name: "n", mimeType: "video/mp4", data: "d" },
            { kind: "file", id: "f4", name: "n", mimeType: "image/png", data: "d" },
            { ...file, extra: "dropped" },
          ],
        },
      ],
    }),
    {
      sessionId: "s2",
      queue: [
        { text: "no attachments", attachments: [] },
        { text: "attachments not a list", attachments: [] },
        { text: "mixed", attachments: [file, image, file] },
      ],
    },
    "messages without text and attachments of unknown or incomplete form are left out; unknown fields are dropped",
  );
});
