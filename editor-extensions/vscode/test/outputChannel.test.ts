// The extension's output channels (src/vscode/outputChannel.ts): while open, every call reaches VS
// Code's channel; dispose closes VS Code's channel; afterwards writes are dropped, never thrown
// ("Channel has been closed" on every window reload, issue 39 item 11).
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { __test } from "./stubs/vscode.js";
import { createOutputChannel } from "../src/vscode/outputChannel.js";

beforeEach(() => __test.reset());

/** createOutputChannel with VS Code's channel under it spied on: the calls that reached it, in order */
function spiedChannel(name: string) {
  const calls: string[] = [];
  const window = vscode.window as { createOutputChannel: (n: string) => vscode.OutputChannel };
  const create = window.createOutputChannel;
  window.createOutputChannel = (n: string) => {
    const real = create(n) as unknown as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ["append", "appendLine", "replace", "clear", "show", "hide", "dispose"]) {
      const orig = real[m]!;
      real[m] = (...a: unknown[]) => (calls.push(m), orig(...a));
    }
    return real as unknown as vscode.OutputChannel;
  };
  try {
    return { channel: createOutputChannel(name), calls };
  } finally {
    window.createOutputChannel = create;
  }
}

test("an open output channel passes every call to VS Code's channel", () => {
  const { channel, calls } = spiedChannel("OpenVaala Test");
  const lines = () => __test.state.outputs.get("OpenVaala Test");
  channel.append("a");
  channel.appendLine("b");
  assert.deepEqual(lines(), ["a", "b\n"], "promise: append and appendLine write while the channel is open");
  channel.replace("r");
  assert.deepEqual(lines(), ["r"], "promise: replace reaches the channel");
  channel.clear();
  assert.deepEqual(lines(), [], "promise: clear reaches the channel");
  channel.show(true);
  channel.hide();
  assert.deepEqual(calls, ["append", "appendLine", "replace", "clear", "show", "hide"], "promise: every call reaches VS Code's channel while open");
  assert.equal(channel.name, "OpenVaala Test");
});

test("dispose closes VS Code's channel, and later writes are dropped without an error", () => {
  const { channel, calls } = spiedChannel("OpenVaala Closed");
  channel.dispose();
  assert.deepEqual(calls, ["dispose"], "promise: disposing the extension's channel disposes VS Code's");
  for (const write of [() => channel.append("x"), () => channel.appendLine("x"), () => channel.replace("x"), () => channel.clear(), () => channel.show(), () => channel.hide()])
    assert.doesNotThrow(write, "promise: a write after dispose is ignored, never 'Channel has been closed'");
  assert.deepEqual(calls, ["dispose"], "promise: nothing reaches a disposed channel");
  assert.deepEqual(__test.state.closedChannelUses, []);
});
