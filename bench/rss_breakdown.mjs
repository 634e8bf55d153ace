#!/usr/bin/env node
// Where the RSS of `openvaala acp` after session/new is (issue 41): /proc/<pid>/status, smaps
// summed by mapping (the binary's text, its data, libc, heap, thread stacks and malloc arenas),
// and how much of .text is mapped in 64 KiB fault-around windows.
//
//   node bench/rss_breakdown.mjs [--bin build/openvaala] [--bin2 other/openvaala] [--runs 5]
// Runs each binary --runs times (in turns) and prints the medians, then one run's mappings.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT, agentBinary, removeTempDirs } from "../tests/integration/harness.mjs";
import { startedSession } from "./startup_session.mjs";

const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : d);
const bins = [opt("--bin", agentBinary()), opt("--bin2", null)].filter(Boolean).map((b) => path.resolve(REPO_ROOT, b));
const runs = Number(opt("--runs", 5));

const kb = (status, key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]);

// Mappings of `pid`: [{ name, perm, sizeKb, rssKb }].
function mappings(pid) {
  const out = [];
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const h = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (h) out.push({ name: h[4] || "[anon]", perm: h[3], sizeKb: (parseInt(h[2], 16) - parseInt(h[1], 16)) / 1024, rssKb: 0 });
    const r = /^Rss:\s+(\d+)/.exec(line);
    if (r) out.at(-1).rssKb = Number(r[1]);
  }
  return out;
}

function classify(m, bin) {
  if (m.name === bin) return m.perm.includes("x") ? "binary .text" : "binary data/rodata";
  if (m.name.startsWith("/")) return path.basename(m.name);
  if (m.name !== "[anon]") return m.name;
  // glibc's thread stacks are 8 MiB mappings; the rest is mostly the threads' malloc arenas.
  return m.sizeKb === 8192 ? "thread stacks" : "anon (malloc arenas, other)";
}

async function measure(bin) {
  const s = await startedSession(bin);
  const pid = s.child.pid;
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const maps = mappings(pid);
  const r = {
    rss: kb(status, "VmRSS"), anon: kb(status, "RssAnon"), file: kb(status, "RssFile"), threads: kb(status, "Threads"),
    by: {},
  };
  for (const m of maps) r.by[classify(m, bin)] = (r.by[classify(m, bin)] ?? 0) + m.rssKb;
  await s.close();
  return r;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const all = bins.map(() => []);
for (let i = 0; i < runs; i++) for (let b = 0; b < bins.length; b++) all[b].push(await measure(bins[b]));
removeTempDirs();
console.log(JSON.stringify({
  runs, load: os.loadavg().map((x) => +x.toFixed(2)),
  results: bins.map((bin, b) => {
    const keys = [...new Set(all[b].flatMap((r) => Object.keys(r.by)))];
    return {
      bin,
      rss_mib: +(median(all[b].map((r) => r.rss)) / 1024).toFixed(2),
      rss_mib_range: [Math.min(...all[b].map((r) => r.rss)) / 1024, Math.max(...all[b].map((r) => r.rss)) / 1024].map((x) => +x.toFixed(2)),
      anon_kib: median(all[b].map((r) => r.anon)),
      file_kib: median(all[b].map((r) => r.file)),
      threads: median(all[b].map((r) => r.threads)),
      rss_kib_by_mapping: Object.fromEntries(keys.map((k) => [k, median(all[b].map((r) => r.by[k] ?? 0))]).sort((x, y) => y[1] - x[1])),
    };
  }),
}, null, 1));
