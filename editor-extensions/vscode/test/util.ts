// Test helpers: reuse the repository's fake model server and config-home helper (tests/), and find
// the real `build/openvaala`.
import path from "node:path";
import fs from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createRequire } from "node:module";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** editor-extensions/vscode */
export const EXT_ROOT = path.resolve(HERE, "..", "..");
export const REPO_ROOT = path.resolve(EXT_ROOT, "..", "..");
/**
 * server-everything's stdio entry, found as Node finds packages (up the folders): Stryker's sandbox
 * has no node_modules of its own when the extension's is a symlink.
 */
export const EVERYTHING = path.join(path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")), "dist", "index.js");

export function agentBinary(): string {
  const bin = process.env.OPENVAALA_BIN || "build/openvaala";
  return path.isAbsolute(bin) ? bin : path.resolve(REPO_ROOT, bin);
}

export function binaryMissing(): string | false {
  // mutation runs (npm run mutate) leave out the tests that need the C++ server: see docs/TESTING.md
  if (process.env.OPENVAALA_TESTS_WITHOUT_BINARY) return "OPENVAALA_TESTS_WITHOUT_BINARY is set (mutation run)";
  try {
    fs.accessSync(agentBinary(), fs.constants.X_OK);
    return false;
  } catch {
    return `agent binary ${agentBinary()} not built (set OPENVAALA_BIN)`;
  }
}

export interface FakeModel {
  url: string;
  requests: { path: string; body: any }[];
  push(step: unknown): void;
  close(): Promise<void>;
}

export async function startFakeModel(script: unknown[]): Promise<FakeModel> {
  const mod = await import(pathToFileURL(path.join(REPO_ROOT, "tests", "fake-model", "fake-model-server.mjs")).href);
  return mod.startFakeModel({ script });
}

export interface ConfigHome {
  root: string;
  configDir: string;
  env: Record<string, string>;
}

export async function harness(): Promise<any> {
  return import(pathToFileURL(path.join(REPO_ROOT, "tests", "integration", "harness.mjs")).href);
}

/** A temp config home whose config.yaml points at the fake model; returns the env for the agent. */
export async function makeConfigHome(modelUrl: string, extraYaml = ""): Promise<ConfigHome> {
  const h = await harness();
  return h.makeConfigHome({ provider: "openai", modelUrl, extraYaml });
}

export async function makeWorkspace(files: Record<string, string> = {}): Promise<string> {
  const h = await harness();
  return h.makeWorkspace(files);
}

/** process.env minus anything that could select a real model, plus `extra`. */
export async function agentEnv(extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const h = await harness();
  return h.agentEnv(extra);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function waitUntil<T>(fn: () => T | undefined | false | null, timeout = 5000, label = "condition"): Promise<T> {
  const end = Date.now() + timeout;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timeout waiting for ${label}`);
    await sleep(20);
  }
}
