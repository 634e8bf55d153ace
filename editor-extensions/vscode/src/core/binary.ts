// Finding the `openvaala` binary: the `openvaala.path` setting, else the platform binary shipped in
// the extension (bin/<platform>-<arch>/openvaala[.exe]), else the PATH. No `vscode` import.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";

export type BinarySource = "setting" | "bundled" | "path";

export interface BinaryLocation {
  path: string;
  source: BinarySource;
}

export interface FindBinaryOptions {
  /** value of the `openvaala.path` setting (may hold ~ or be relative to the first workspace folder) */
  setting?: string | undefined;
  /** the extension's install folder */
  extensionPath?: string | undefined;
  workspaceFolder?: string | undefined;
  platform?: NodeJS.Platform;
  arch?: string;
  env?: NodeJS.ProcessEnv;
  /** injectable for tests */
  isExecutable?: (p: string) => boolean;
}

export function binaryName(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? "openvaala.exe" : "openvaala";
}

/** `bin/<platform>-<arch>` as `vsce package --target` names them (linux-x64, darwin-arm64, win32-x64, ...). */
export function bundledBinaryPath(extensionPath: string, platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return path.join(extensionPath, "bin", `${platform}-${arch}`, binaryName(platform));
}

export function defaultIsExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function expandHome(p: string, home: string = os.homedir()): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** Searches PATH (and PATHEXT on Windows) for `name`. */
export function whichSync(name: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, isExecutable = defaultIsExecutable): string | undefined {
  const sep = platform === "win32" ? ";" : ":";
  const dirs = (env.PATH ?? env.Path ?? "").split(sep).filter(Boolean);
  const exts = platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").concat([""]) : [""];
  for (const d of dirs) {
    for (const e of exts) {
      const p = path.join(d, name + e.toLowerCase());
      if (isExecutable(p)) return p;
      if (e && isExecutable(path.join(d, name + e))) return path.join(d, name + e);
    }
  }
  return undefined;
}

export class BinaryNotFoundError extends Error {
  constructor(readonly tried: string[]) {
    super(
      `Could not find the openvaala binary. Tried: ${tried.join(", ")}. ` +
        `Install openvaala and put it on your PATH, or set "openvaala.path" in your settings.`,
    );
  }
}

/** Returns where the binary is, or throws BinaryNotFoundError listing what was tried. */
export function findBinary(opts: FindBinaryOptions = {}): BinaryLocation {
  const platform = opts.platform ?? process.platform;
  const arch = opts.arch ?? process.arch;
  const env = opts.env ?? process.env;
  const isExec = opts.isExecutable ?? defaultIsExecutable;
  const tried: string[] = [];
  const setting = opts.setting?.trim();
  if (setting) {
    let p = expandHome(setting);
    if (!path.isAbsolute(p) && opts.workspaceFolder && (p.includes("/") || p.includes("\\"))) p = path.resolve(opts.workspaceFolder, p);
    if (path.isAbsolute(p)) {
      if (isExec(p)) return { path: p, source: "setting" };
      // an explicit setting that does not exist is an error: do not silently fall back
      throw new BinaryNotFoundError([`openvaala.path = ${p} (not an executable file)`]);
    }
    const found = whichSync(p, env, platform, isExec);
    if (found) return { path: found, source: "setting" };
    throw new BinaryNotFoundError([`openvaala.path = ${p} (not on PATH)`]);
  }
  if (opts.extensionPath) {
    const b = bundledBinaryPath(opts.extensionPath, platform, arch);
    tried.push(b);
    if (isExec(b)) return { path: b, source: "bundled" };
  }
  const onPath = whichSync("openvaala", env, platform, isExec);
  tried.push("openvaala on PATH");
  if (onPath) return { path: onPath, source: "path" };
  throw new BinaryNotFoundError(tried);
}
