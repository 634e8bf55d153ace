// Attachments and the ACP content blocks they become (src/core/attachments.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { atTyped, fileUri, imageFromDataUrl, promptBlocks, MAX_EMBEDDED_CHARS, type ResolvedAttachment } from "../src/core/attachments.js";

test("@ opens the file picker only at the start of a word", () => {
  assert.equal(atTyped("@", 1), true, "at the start of the message");
  assert.equal(atTyped("look at @", 9), true, "after a space");
  assert.equal(atTyped("a\n@", 3), true, "after a newline");
  assert.equal(atTyped("me@example", 3), false, "not inside a word (an e-mail address)");
  assert.equal(atTyped("@x", 2), false, "only right after the @ is typed");
  assert.equal(atTyped("", 0), false, "an empty input");
});

test("file URIs: absolute POSIX and Windows paths, special characters escaped", () => {
  assert.equal(fileUri("/w/a b.txt"), "file:///w/a%20b.txt");
  assert.equal(fileUri("C:\\w\\a#.ts"), "file:///C:/w/a%23.ts");
  assert.equal(fileUri("/w/ä"), "file:///w/%C3%A4");
  assert.equal(fileUri("/w/b:c"), "file:///w/b%3Ac", "a colon inside a POSIX path stays escaped (only a leading drive letter is kept)");
});

test("a pasted image's data URL gives its type and base64 data; anything else gives nothing", () => {
  assert.deepEqual(imageFromDataUrl("data:image/png;base64,iVBORw0KGgo="), { mimeType: "image/png", data: "iVBORw0KGgo=" });
  assert.deepEqual(imageFromDataUrl("data:image/svg+xml;base64,PHN2Zz4="), { mimeType: "image/svg+xml", data: "PHN2Zz4=" });
  assert.equal(imageFromDataUrl("data:text/plain;base64,aGk="), undefined, "not an image");
  assert.equal(imageFromDataUrl("data:image/png,raw"), undefined, "not base64");
  assert.equal(imageFromDataUrl("xdata:image/png;base64,aGk="), undefined, "anchored at the start");
  assert.equal(imageFromDataUrl("data:image/png;base64,aGk= tail"), undefined, "anchored at the end");
});

const file: ResolvedAttachment = { kind: "file", id: "1", path: "/w/a.txt", name: "a.txt", text: "hello" };
const unreadable: ResolvedAttachment = { kind: "file", id: "2", path: "/w/b.bin", name: "b.bin" };
const image: ResolvedAttachment = { kind: "image", id: "3", name: "paste.png", mimeType: "image/png", data: "AAAA" };

test("with embedded context a file goes as a resource with its text; unreadable or huge files as links", () => {
  const huge: ResolvedAttachment = { ...file, id: "4", text: "x".repeat(MAX_EMBEDDED_CHARS + 1) };
  const limit: ResolvedAttachment = { ...file, id: "5", text: "y".repeat(MAX_EMBEDDED_CHARS) };
  const r = promptBlocks("see", [file, unreadable, huge, limit], { embeddedContext: true, image: true });
  assert.deepEqual(r.blocks[0], { type: "text", text: "see" }, "the text comes first");
  assert.deepEqual(r.blocks[1], { type: "resource", resource: { uri: "file:///w/a.txt", text: "hello" } }, "a readable file is embedded");
  assert.deepEqual(r.blocks[2], { type: "resource_link", uri: "file:///w/b.bin", name: "b.bin" }, "an unreadable file is linked");
  assert.equal(r.blocks[3]!.type, "resource_link", "a file over the limit is linked");
  assert.equal(r.blocks[4]!.type, "resource", "a file at the limit is still embedded");
  assert.deepEqual(r.dropped, []);
});

test("without embedded context files go as resource links", () => {
  assert.deepEqual(promptBlocks("", [file], { embeddedContext: false }).blocks, [{ type: "resource_link", uri: "file:///w/a.txt", name: "a.txt" }], "without embedded context a file goes as a resource_link (and an empty message has no text block)");
  assert.deepEqual(promptBlocks("x", [file], undefined).blocks[1], { type: "resource_link", uri: "file:///w/a.txt", name: "a.txt" }, "no capabilities: links");
});

test("an image goes as an image block when the agent takes images, else it is reported as dropped", () => {
  assert.deepEqual(promptBlocks("look", [image], { image: true }).blocks, [{ type: "text", text: "look" }, { type: "image", mimeType: "image/png", data: "AAAA" }]);
  const r = promptBlocks("look", [image], { image: false, embeddedContext: true });
  assert.deepEqual(r.blocks, [{ type: "text", text: "look" }], "the image is left out");
  assert.deepEqual(r.dropped, ["paste.png"], "and named, so the user is told");
});
