// Where the server comes from and what environment it gets, for a folder (or for no folder):
// `openvaala.path`, `openvaala.args`, `openvaala.env`. One place for the chat, Check Configuration
// and Open Config Folder, so they all see the server the user configured.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import { findBinary } from "../core/binary.js";

function settings(folder: vscode.WorkspaceFolder | undefined) {
  return vscode.workspace.getConfiguration("openvaala", folder?.uri);
}

/** VS Code's environment plus `openvaala.env` */
export function serverEnv(base: NodeJS.ProcessEnv, folder?: vscode.WorkspaceFolder): NodeJS.ProcessEnv {
  return { ...base, ...(settings(folder).get<Record<string, string>>("env") ?? {}) };
}

/** The config root as the server computes it ($OPENVAALA_CONFIG_DIR, $XDG_CONFIG_HOME/openvaala, ~/.config/openvaala). */
export function configRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPENVAALA_CONFIG_DIR) return env.OPENVAALA_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return path.join(env.XDG_CONFIG_HOME, "openvaala");
  return path.join(os.homedir(), ".config", "openvaala");
}

export function serverArgs(folder?: vscode.WorkspaceFolder): string[] {
  return settings(folder).get<string[]>("args") ?? ["acp"];
}

/** In a remote or browser window the server runs where the extension host runs: User settings do not apply there. */
export function remoteSettingsHint(): string {
  const remote = vscode.env.remoteName;
  return remote
    ? ` This window is remote (${remote}): openvaala.path, openvaala.args and openvaala.env are read from the Remote settings (Preferences: Open Remote Settings), not from your User settings.`
    : "";
}

export function serverBinary(extensionPath: string, folder: vscode.WorkspaceFolder | undefined, env: NodeJS.ProcessEnv): string {
  try {
    return findBinary({ setting: settings(folder).get<string>("path"), extensionPath, workspaceFolder: folder?.uri.fsPath, env }).path;
  } catch (e) {
    (e as Error).message += remoteSettingsHint();
    throw e;
  }
}

/** `openvaala.server.url`: a running `openvaala acp --listen` to reach instead of starting a server. */
export function serverUrl(folder?: vscode.WorkspaceFolder): string | undefined {
  return settings(folder).get<string>("server.url")?.trim() || undefined;
}

/** where "OpenVaala: Set Server Token" keeps the token (VS Code's secret storage) */
export const SERVER_TOKEN_SECRET = "openvaala.server.token";

/**
 * The bearer token for `openvaala.server.url`: the text of `openvaala.server.tokenFile` with the
 * surrounding whitespace trimmed (the server reads its `--token-file` the same way), else the token
 * stored with "OpenVaala: Set Server Token", else none. A token file that cannot be read is an error
 * that names the setting, never a silent connection without the token.
 */
export async function serverToken(folder: vscode.WorkspaceFolder | undefined, secrets: vscode.SecretStorage): Promise<string | undefined> {
  const file = settings(folder).get<string>("server.tokenFile")?.trim();
  if (file) {
    const full = file.startsWith("~/") ? path.join(os.homedir(), file.slice(2)) : file;
    try {
      return (await fs.promises.readFile(full, "utf8")).trim();
    } catch (e) {
      throw new Error(`openvaala.server.tokenFile: cannot read ${full}: ${(e as Error).message}`);
    }
  }
  return (await secrets.get(SERVER_TOKEN_SECRET))?.trim() || undefined;
}
