import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { findBinary, bundledBinaryPath, BinaryNotFoundError } from "../src/core/binary.js";
import { TerminalManager } from "../src/core/terminals.js";

test("binary discovery: setting, then bundled, then PATH", () => {
  const exists = (set: string[]) => (p: string) => set.includes(p);
  const ext = "/ext";
  const bundled = bundledBinaryPath(ext, "linux", "x64");
  assert.equal(bundled, path.join("/ext", "bin", "linux-x64", "openvaala"));
  assert.deepEqual(findBinary({ setting: "/opt/ov", extensionPath: ext, platform: "linux", arch: "x64", env: { PATH: "/usr/bin" }, isExecutable: exists(["/opt/ov", bundled]) }), { path: "/opt/ov", source: "setting" });
  assert.deepEqual(findBinary({ extensionPath: ext, platform: "linux", arch: "x64", env: { PATH: "/usr/bin" }, isExecutable: exists([bundled, "/usr/bin/openvaala"]) }), { path: bundled, source: "bundled" });
  assert.deepEqual(findBinary({ extensionPath: ext, platform: "linux", arch: "x64", env: { PATH: "/a:/usr/bin" }, isExecutable: exists(["/usr/bin/openvaala"]) }), { path: "/usr/bin/openvaala", source: "path" });
  assert.throws(() => findBinary({ setting: "/missing", platform: "linux", env: {}, isExecutable: () => false }), BinaryNotFoundError);
  assert.throws(() => findBinary({ extensionPath: ext, platform: "linux", arch: "x64", env: { PATH: "/a" }, isExecutable: () => false }), /openvaala\.path/);
  assert.equal(bundledBinaryPath(ext, "win32", "arm64"), path.join("/ext", "bin", "win32-arm64", "openvaala.exe"));
});

test("terminals: output limit truncates from the front, exit status, release kills", async () => {
  const tm = new TerminalManager(process.cwd());
  const data: string[] = [];
  tm.listeners.add({ onData: (_t, c) => data.push(c) });
  const { terminalId } = tm.create({ sessionId: "s", command: process.execPath, args: ["-e", "process.stdout.write('x'.repeat(100) + 'END'); process.exit(3)"], outputByteLimit: 10 });
  const ex = await tm.waitForExit({ sessionId: "s", terminalId });
  assert.equal(ex.exitCode, 3);
  const out = tm.output({ sessionId: "s", terminalId });
  assert.equal(out.truncated, true);
  assert.equal(out.output.length, 10);
  assert.ok(out.output.endsWith("END"));
  assert.equal(out.exitStatus!.exitCode, 3);
  assert.ok(data.join("").length >= 103, "listeners see all output");
  const t2 = tm.create({ sessionId: "s", command: "sleep 30" });
  const term = tm.get(t2.terminalId);
  tm.release({ sessionId: "s", terminalId: t2.terminalId });
  const st = await term.exited;
  assert.ok(st.signal === "SIGKILL" || st.exitCode !== 0);
  assert.throws(() => tm.output({ sessionId: "s", terminalId: t2.terminalId }));
});
