// Collects the MCP servers the user configured in VS Code for one folder: the folder's
// .vscode/mcp.json, the user profile's mcp.json and the `mcp` setting. `${input:id}` values are
// asked once (showInputBox) and kept in SecretStorage.
import * as vscode from "vscode";
import path from "node:path";
import {
  readMcpConfigFile,
  fromObject,
  resolveMcpServers,
  userMcpJsonPath,
  type McpSource,
  type McpInputDef,
  type ResolvedMcpServers,
} from "../core/mcpConfig.js";

const SECRET_PREFIX = "openvaala.mcp.input.";

export async function askInputOnce(secrets: vscode.SecretStorage, def: McpInputDef): Promise<string | undefined> {
  const key = SECRET_PREFIX + def.id;
  const kept = await secrets.get(key);
  if (kept !== undefined) return kept;
  let value: string | undefined;
  if (def.type === "pickString" && def.options?.length) {
    value = await vscode.window.showQuickPick(def.options, { title: `MCP input "${def.id}"`, placeHolder: def.description ?? def.id, ignoreFocusOut: true });
  } else {
    value = await vscode.window.showInputBox({
      title: `MCP input "${def.id}"`,
      prompt: def.description ?? `Value for \${input:${def.id}}`,
      password: def.password ?? false,
      value: def.default ?? "",
      ignoreFocusOut: true,
    });
  }
  if (value !== undefined) await secrets.store(key, value);
  return value;
}

export async function forgetInputs(secrets: vscode.SecretStorage, ids: string[]): Promise<void> {
  for (const id of ids) await secrets.delete(SECRET_PREFIX + id);
}

export function mcpSourcesFor(folder: vscode.WorkspaceFolder, globalStoragePath: string): McpSource[] {
  const sources: McpSource[] = [];
  const userFile = userMcpJsonPath(globalStoragePath);
  const user = readMcpConfigFile(userFile);
  if (user) sources.push({ kind: "user", origin: userFile, config: user });
  const setting = vscode.workspace.getConfiguration("mcp", folder.uri);
  const servers = setting.get<Record<string, unknown>>("servers");
  const inputs = setting.get<unknown[]>("inputs");
  if (servers && Object.keys(servers).length) sources.push({ kind: "settings", origin: "settings (mcp.servers)", config: fromObject({ servers, inputs: inputs ?? [] }, "settings (mcp.servers)") });
  const wsFile = path.join(folder.uri.fsPath, ".vscode", "mcp.json");
  const ws = readMcpConfigFile(wsFile);
  if (ws) sources.push({ kind: "workspace", origin: wsFile, config: ws });
  return sources;
}

export async function collectMcpServers(folder: vscode.WorkspaceFolder, globalStoragePath: string, secrets: vscode.SecretStorage): Promise<ResolvedMcpServers> {
  return resolveMcpServers(mcpSourcesFor(folder, globalStoragePath), {
    workspaceFolder: folder.uri.fsPath,
    env: process.env,
    askInput: (def) => askInputOnce(secrets, def),
  });
}
