#!/usr/bin/env node
// Writes cmake/startup-order.txt: the functions `openvaala acp` runs from spawn to just after
// session/new (callgrind's list, mangled), which the link puts first in .text so that start-up
// touches a few hundred KiB of code instead of pages spread over all 10 MB (RSS; CMakeLists.txt,
// OPENVAALA_STARTUP_ORDER). Rerun after large changes; a stale list only moves less code.
//
//   node bench/startup_order.mjs [--bin build/openvaala] [--out cmake/startup-order.txt]
// Needs valgrind. Takes ~20 s.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, agentBinary, removeTempDirs } from "../tests/integration/harness.mjs";
import { startedSession } from "./startup_session.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bin = path.resolve(REPO_ROOT, opt("--bin", agentBinary()));
const out = path.resolve(REPO_ROOT, opt("--out", "cmake/startup-order.txt"));

const profile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ov-order-")), "callgrind.out");
const s = await startedSession(bin, {
  prefix: ["valgrind", "--tool=callgrind", "--demangle=no", "--dump-instr=no", `--callgrind-out-file=${profile}`],
});
await s.close();
removeTempDirs();

// Callgrind names each function once as "fn=(id) name" (later mentions are "(id)" alone).
const seen = new Set();
for (const m of fs.readFileSync(profile, "utf8").matchAll(/^c?fn=\(\d+\) (.+)$/gm)) seen.add(m[1]);
fs.rmSync(path.dirname(profile), { recursive: true, force: true });
const defined = new Set(execFileSync("nm", ["--defined-only", bin], { encoding: "utf8", maxBuffer: 1 << 30 })
  .split("\n").filter((l) => / [tTwW] /.test(l)).map((l) => l.split(" ")[2]));
const names = [...seen].filter((n) => defined.has(n));
fs.writeFileSync(out, names.join("\n") + "\n");
console.log(`${names.length} functions of ${bin} written to ${out}`);
