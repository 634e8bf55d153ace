// VS Code's MCP server configuration: `.vscode/mcp.json` of a folder, the user profile's
// `mcp.json`, the `mcp.servers` setting (and the portable `.mcp.json` `mcpServers` form). JSONC
// (comments, trailing commas). Variables: ${workspaceFolder}, ${workspaceFolderBasename},
// ${userHome}, ${pathSeparator}, ${env:NAME}, ${input:id} (asked once through `askInput`).
// No `vscode` import.
import { parse as parseJsonc, printParseErrorCode, type ParseError } from "jsonc-parser";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";

export type McpSourceKind = "user" | "settings" | "workspace";

export interface McpInputDef {
  id: string;
  type: "promptString" | "pickString" | string;
  description?: string;
  password?: boolean;
  default?: string;
  options?: string[];
}

export interface StdioServerConfig {
  type: "stdio";
  name: string;
  command: string;
  args: string[];
  cwd?: string | undefined;
  env: Record<string, string>;
  envFile?: string | undefined;
}

export interface HttpServerConfig {
  type: "http" | "sse";
  name: string;
  url: string;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfigProblem {
  source: string;
  message: string;
  /** 0-based offset in the file, when known */
  offset?: number | undefined;
  line?: number | undefined;
}

export interface ParsedMcpConfig {
  /** raw (unresolved) server entries by name */
  servers: Record<string, unknown>;
  inputs: McpInputDef[];
  problems: McpConfigProblem[];
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/** Parses one mcp.json (JSONC). Accepts `{servers, inputs}` and the portable `{mcpServers}` form. */
export function parseMcpConfigText(text: string, source = "mcp.json"): ParsedMcpConfig {
  const errors: ParseError[] = [];
  const data = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true }) as unknown;
  const problems: McpConfigProblem[] = errors.map((e) => ({
    source,
    offset: e.offset,
    line: lineOf(text, e.offset),
    message: `JSON syntax error: ${printParseErrorCode(e.error)}`,
  }));
  return fromObject(data, source, problems);
}

/** The `mcp` settings section (`{servers, inputs}`) or any already-parsed object. */
export function fromObject(data: unknown, source: string, problems: McpConfigProblem[] = []): ParsedMcpConfig {
  const out: ParsedMcpConfig = { servers: {}, inputs: [], problems };
  if (data === undefined || data === null) return out;
  if (typeof data !== "object" || Array.isArray(data)) {
    problems.push({ source, message: "the top level must be an object" });
    return out;
  }
  const o = data as Record<string, unknown>;
  const servers = o.servers ?? o.mcpServers;
  if (servers !== undefined) {
    if (typeof servers !== "object" || servers === null || Array.isArray(servers)) problems.push({ source, message: `"servers" must be an object` });
    else Object.assign(out.servers, servers);
  }
  if (Array.isArray(o.inputs)) {
    for (const i of o.inputs) {
      if (i && typeof i === "object" && typeof (i as McpInputDef).id === "string") out.inputs.push(i as McpInputDef);
      else problems.push({ source, message: `an input needs an "id"` });
    }
  }
  return out;
}

export interface VariableContext {
  workspaceFolder?: string | undefined;
  userHome?: string;
  env?: NodeJS.ProcessEnv;
  inputs?: McpInputDef[];
  /** resolves ${input:id}; returns undefined when the user declines */
  askInput?: (def: McpInputDef) => Promise<string | undefined>;
}

export class UnresolvedVariableError extends Error {}

const VAR_RE = /\$\{([^}]+)\}/g;

/** Resolves variables in one string. Unknown variables are left as they are. */
export async function resolveString(s: string, ctx: VariableContext): Promise<string> {
  const matches = [...s.matchAll(VAR_RE)];
  if (!matches.length) return s;
  let out = "";
  let last = 0;
  for (const m of matches) {
    out += s.slice(last, m.index);
    last = m.index! + m[0].length;
    out += await resolveVariable(m[1]!, m[0], ctx);
  }
  return out + s.slice(last);
}

async function resolveVariable(name: string, whole: string, ctx: VariableContext): Promise<string> {
  const env = ctx.env ?? process.env;
  if (name === "workspaceFolder") {
    if (!ctx.workspaceFolder) throw new UnresolvedVariableError(`\${workspaceFolder} used outside a workspace folder`);
    return ctx.workspaceFolder;
  }
  if (name === "workspaceFolderBasename") {
    if (!ctx.workspaceFolder) throw new UnresolvedVariableError(`\${workspaceFolderBasename} used outside a workspace folder`);
    return path.basename(ctx.workspaceFolder);
  }
  if (name === "userHome") return ctx.userHome ?? os.homedir();
  if (name === "pathSeparator" || name === "/") return path.sep;
  if (name.startsWith("env:")) return env[name.slice(4)] ?? "";
  if (name.startsWith("input:")) {
    const id = name.slice(6);
    const def = ctx.inputs?.find((i) => i.id === id) ?? { id, type: "promptString" };
    if (!ctx.askInput) throw new UnresolvedVariableError(`no way to ask for \${input:${id}}`);
    const v = await ctx.askInput(def);
    if (v === undefined) throw new UnresolvedVariableError(`no value given for \${input:${id}}`);
    return v;
  }
  return whole;
}

async function resolveDeep(v: unknown, ctx: VariableContext): Promise<unknown> {
  if (typeof v === "string") return resolveString(v, ctx);
  if (Array.isArray(v)) return Promise.all(v.map((x) => resolveDeep(x, ctx)));
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = await resolveDeep(x, ctx);
    return o;
  }
  return v;
}

/** Minimal dotenv parser for `envFile`. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let v = m[2]!;
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) {
      const dq = v.startsWith('"');
      v = v.slice(1, -1);
      if (dq) v = v.replace(/\\n/g, "\n").replace(/\\"/g, '"');
    } else {
      v = v.replace(/\s+#.*$/, "");
    }
    out[m[1]!] = v;
  }
  return out;
}

function stringRecord(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v || typeof v !== "object") return out;
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined) continue;
    out[k] = String(x);
  }
  return out;
}

/**
 * Validates and resolves one raw entry. Throws UnresolvedVariableError for a missing ${input:}
 * and Error with a message for an invalid entry.
 */
export async function resolveServer(name: string, raw: unknown, ctx: VariableContext, readFile: (p: string) => string = (p) => fs.readFileSync(p, "utf8")): Promise<McpServerConfig> {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error(`server "${name}": must be an object`);
  const r = (await resolveDeep(raw, ctx)) as Record<string, unknown>;
  const type = typeof r.type === "string" ? r.type : r.url !== undefined ? "http" : "stdio";
  if (type === "stdio") {
    if (typeof r.command !== "string" || !r.command) throw new Error(`server "${name}": "command" is required for a stdio server`);
    const args = Array.isArray(r.args) ? r.args.map(String) : [];
    let env: Record<string, string> = {};
    let envFile: string | undefined;
    if (typeof r.envFile === "string" && r.envFile) {
      envFile = r.envFile;
      env = { ...parseDotenv(readFile(r.envFile)) };
    }
    env = { ...env, ...stringRecord(r.env) };
    const cfg: StdioServerConfig = { type: "stdio", name, command: r.command, args, env, envFile };
    if (typeof r.cwd === "string" && r.cwd) cfg.cwd = r.cwd;
    else if (ctx.workspaceFolder) cfg.cwd = ctx.workspaceFolder;
    return cfg;
  }
  if (type === "http" || type === "sse") {
    if (typeof r.url !== "string" || !/^https?:\/\//.test(r.url)) throw new Error(`server "${name}": "url" must be an http(s) URL`);
    return { type, name, url: r.url, headers: stringRecord(r.headers) };
  }
  throw new Error(`server "${name}": unknown type "${type}" (expected stdio, http or sse)`);
}

export interface McpSource {
  kind: McpSourceKind;
  /** file path or "settings" */
  origin: string;
  config: ParsedMcpConfig;
}

export interface ResolvedMcpServers {
  servers: McpServerConfig[];
  /** where each server came from */
  origins: Record<string, string>;
  problems: McpConfigProblem[];
  /** entries skipped because an ${input:} was declined */
  skipped: string[];
}

/**
 * Merges sources by server name (later sources win: user < settings < workspace) and resolves them.
 * Inputs of every source are visible to every entry.
 */
export async function resolveMcpServers(sources: McpSource[], ctx: VariableContext, readFile?: (p: string) => string): Promise<ResolvedMcpServers> {
  const order: Record<McpSourceKind, number> = { user: 0, settings: 1, workspace: 2 };
  const sorted = [...sources].sort((a, b) => order[a.kind] - order[b.kind]);
  const merged = new Map<string, { raw: unknown; origin: string }>();
  const inputs: McpInputDef[] = [];
  const problems: McpConfigProblem[] = [];
  for (const s of sorted) {
    problems.push(...s.config.problems);
    inputs.push(...s.config.inputs);
    for (const [name, raw] of Object.entries(s.config.servers)) merged.set(name, { raw, origin: s.origin });
  }
  const out: ResolvedMcpServers = { servers: [], origins: {}, problems, skipped: [] };
  const fullCtx: VariableContext = { ...ctx, inputs: [...inputs, ...(ctx.inputs ?? [])] };
  for (const [name, { raw, origin }] of merged) {
    try {
      out.servers.push(await resolveServer(name, raw, fullCtx, readFile));
      out.origins[name] = origin;
    } catch (e) {
      if (e instanceof UnresolvedVariableError) out.skipped.push(name);
      problems.push({ source: origin, message: (e as Error).message });
    }
  }
  return out;
}

/** Reads and parses a file if it exists (missing file = empty config). */
export function readMcpConfigFile(file: string): ParsedMcpConfig | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  return parseMcpConfigText(text, file);
}

/** The user profile's mcp.json from the extension's globalStorage path (…/User[/profiles/<id>]/globalStorage/<ext>). */
export function userMcpJsonPath(globalStoragePath: string): string {
  return path.join(path.dirname(path.dirname(globalStoragePath)), "mcp.json");
}

/** Same as an ACP `session/new` entry (for agents that do not accept `acp` servers). */
export function toAcpMcpServer(s: McpServerConfig): Record<string, unknown> {
  if (s.type === "stdio") {
    return { name: s.name, command: s.command, args: s.args, env: Object.entries(s.env).map(([name, value]) => ({ name, value })) };
  }
  return { type: s.type, name: s.name, url: s.url, headers: Object.entries(s.headers).map(([name, value]) => ({ name, value })) };
}
