import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import fs from "node:fs";
import os from "node:os";
import { findBinary, bundledBinaryPath, BinaryNotFoundError, binaryName, defaultIsExecutable, expandHome, whichSync } from "../src/core/binary.js";
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

test("openvaala.path: ~ is home, a relative path with a slash is in the folder, a bare name is looked up on PATH; a bad setting is an error, never a fallback", () => {
  const home = os.homedir();
  const seen: string[] = [];
  const exec = (set: string[]) => (p: string) => (seen.push(p), set.includes(p));
  assert.deepEqual(findBinary({ setting: "~/bin/ov", platform: "linux", env: {}, isExecutable: exec([path.join(home, "bin/ov")]) }), { path: path.join(home, "bin/ov"), source: "setting" }, "~/ is the home folder");
  assert.deepEqual(findBinary({ setting: "  ./tools/ov  ", workspaceFolder: "/ws", platform: "linux", env: {}, isExecutable: exec(["/ws/tools/ov"]) }), { path: "/ws/tools/ov", source: "setting" }, "a relative path is in the workspace folder; blanks around it are ignored");
  assert.deepEqual(findBinary({ setting: "ov-dev", workspaceFolder: "/ws", platform: "linux", env: { PATH: "/a:/b" }, isExecutable: exec(["/b/ov-dev"]) }), { path: "/b/ov-dev", source: "setting" }, "a bare name is looked up on PATH");
  assert.throws(() => findBinary({ setting: "ov-dev", platform: "linux", env: { PATH: "/a" }, extensionPath: "/ext", isExecutable: exec(["/ext/bin/linux-x64/openvaala"]) }), (e: Error) => e instanceof BinaryNotFoundError && /openvaala\.path = ov-dev \(not on PATH\)/.test(e.message), "a bare name not on PATH is an error, not the bundled binary");
  assert.throws(() => findBinary({ setting: "/opt/missing", extensionPath: "/ext", platform: "linux", arch: "x64", env: { PATH: "/usr/bin" }, isExecutable: exec(["/ext/bin/linux-x64/openvaala", "/usr/bin/openvaala"]) }), (e: BinaryNotFoundError) => e.tried.length === 1 && /openvaala\.path = \/opt\/missing \(not an executable file\)/.test(e.message), "a missing explicit path is an error, not a fallback");
  assert.throws(() => findBinary({ setting: "tools/ov", platform: "linux", env: { PATH: "" }, isExecutable: () => false }), /openvaala\.path = tools\/ov \(not on PATH\)/, "a relative path without a folder is looked up on PATH");
  assert.deepEqual(findBinary({ setting: "   ", extensionPath: "/ext", platform: "linux", arch: "arm64", env: {}, isExecutable: exec(["/ext/bin/linux-arm64/openvaala"]) }), { path: "/ext/bin/linux-arm64/openvaala", source: "bundled" }, "a blank setting is no setting");
  const e = (() => {
    try {
      findBinary({ extensionPath: "/ext", platform: "darwin", arch: "arm64", env: {}, isExecutable: () => false });
    } catch (x) {
      return x as BinaryNotFoundError;
    }
    return undefined;
  })();
  assert.deepEqual(e?.tried, ["/ext/bin/darwin-arm64/openvaala", "openvaala on PATH"], "the error lists what was tried");
  assert.match(e!.message, /^Could not find the openvaala binary\. Tried: \/ext\/bin\/darwin-arm64\/openvaala, openvaala on PATH\. Install openvaala and put it on your PATH, or set "openvaala\.path" in your settings\.$/, "and tells the user what to do");
  assert.deepEqual(findBinary({ platform: "linux", env: { PATH: "/p" }, isExecutable: exec(["/p/openvaala"]) }), { path: "/p/openvaala", source: "path" }, "without an extension folder, PATH");
});

test("home and PATH look-ups", () => {
  assert.equal(expandHome("~", "/h"), "/h");
  assert.equal(expandHome("~/x", "/h"), path.join("/h", "x"));
  assert.equal(expandHome("~\\x", "/h"), path.join("/h", "x"), "a Windows-style ~\\ is home too");
  assert.equal(expandHome("~x/y", "/h"), "~x/y", "~user is not expanded");
  assert.equal(expandHome("/a/~/b", "/h"), "/a/~/b");
  assert.equal(expandHome("~"), os.homedir(), "home defaults to the user's");
  const exec = (set: string[]) => (p: string) => set.includes(p);
  assert.equal(whichSync("ov", { PATH: "::/a::/b" }, "linux", exec(["/b/ov"])), "/b/ov", "empty PATH entries are skipped");
  assert.equal(whichSync("ov", { PATH: "/a:/b" }, "linux", exec(["/a/ov", "/b/ov"])), "/a/ov", "the first PATH entry wins");
  assert.equal(whichSync("ov", { PATH: "/a;/b" }, "linux", exec(["/a;/b/ov"])), "/a;/b/ov", "; does not separate PATH on POSIX");
  assert.equal(whichSync("ov", {}, "linux", () => true), undefined, "no PATH, nothing found");
  const w = path.join("C:\\t", "ov.exe");
  assert.equal(whichSync("ov", { Path: "C:\\t", PATHEXT: ".EXE;.CMD" }, "win32", exec([w])), w, "on Windows, Path and PATHEXT (lower case first)");
  const upper = path.join("C:\\t", "ov.CMD");
  assert.equal(whichSync("ov", { PATH: "C:\\t;D:\\u", PATHEXT: ".EXE;.CMD" }, "win32", exec([upper])), upper, "then the extension as written");
  assert.equal(whichSync("ov", { PATH: "C:\\t" }, "win32", exec([path.join("C:\\t", "ov.bat")])), path.join("C:\\t", "ov.bat"), "a default PATHEXT has .BAT");
  assert.equal(whichSync("ov", { PATH: "C:\\t" }, "win32", exec([path.join("C:\\t", "ov")])), path.join("C:\\t", "ov"), "and the bare name last");
  assert.equal(binaryName("win32"), "openvaala.exe");
  assert.equal(binaryName("linux"), "openvaala");
  assert.equal(bundledBinaryPath("/e"), path.join("/e", "bin", `${process.platform}-${process.arch}`, binaryName()), "the bundled binary for this machine");
});

test("an executable is a file with the x bit", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ovbin-"));
  const exe = path.join(dir, "exe");
  const plain = path.join(dir, "plain");
  fs.writeFileSync(exe, "#!/bin/sh\n");
  fs.chmodSync(exe, 0o755);
  fs.writeFileSync(plain, "x");
  fs.chmodSync(plain, 0o644);
  assert.equal(defaultIsExecutable(exe), true, "an executable file is");
  assert.equal(defaultIsExecutable(plain), false, "a file without x is not");
  assert.equal(defaultIsExecutable(dir), false, "a folder is not");
  assert.equal(defaultIsExecutable(path.join(dir, "missing")), false, "a missing file is not");
  assert.equal(whichSync("exe", { PATH: dir }), exe, "PATH look-up uses it by default");
  assert.deepEqual(findBinary({ setting: exe }), { path: exe, source: "setting" }, "and so does findBinary");
});
