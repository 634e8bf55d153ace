import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseMcpConfigText, resolveMcpServers, resolveServer, resolveString, parseDotenv, fromObject, readMcpConfigFile, userMcpJsonPath, toAcpMcpServer, type McpInputDef } from "../src/core/mcpConfig.js";

const WORKSPACE_JSONC = `{
  // comments and trailing commas are allowed
  "inputs": [
    { "type": "promptString", "id": "api-key", "description": "API key", "password": true },
  ],
  "servers": {
    "fs": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "\${workspaceFolder}/src"],
      "env": { "TOKEN": "\${input:api-key}", "HOME_DIR": "\${env:MY_HOME}", "N": 3, "NULLED": null },
    },
    /* block comment */
    "remote": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer \${input:api-key}" } },
    "legacy-sse": { "type": "sse", "url": "http://127.0.0.1:3001/sse" },
  },
}`;

test("JSONC: comments and trailing commas parse; servers and inputs are read", () => {
  const c = parseMcpConfigText(WORKSPACE_JSONC, "/ws/.vscode/mcp.json");
  assert.deepEqual(c.problems, []);
  assert.deepEqual(Object.keys(c.servers), ["fs", "remote", "legacy-sse"]);
  assert.equal(c.inputs.length, 1);
  assert.equal(c.inputs[0]!.id, "api-key");
});

test("syntax errors are reported with a line", () => {
  const c = parseMcpConfigText('{\n  "servers": {\n    "a": { "command": "x" \n  }\n', "bad.json");
  assert.ok(c.problems.length > 0);
  assert.ok(c.problems[0]!.line! >= 3, JSON.stringify(c.problems));
  assert.equal(c.problems[0]!.source, "bad.json");
});

test("the portable mcpServers form is accepted", () => {
  const c = parseMcpConfigText('{"mcpServers": {"x": {"command": "y"}}}');
  assert.deepEqual(Object.keys(c.servers), ["x"]);
});

test("variables: workspaceFolder, env, input asked once per id, unknown kept", async () => {
  let asked = 0;
  const askInput = async (d: McpInputDef) => {
    asked++;
    assert.equal(d.password, true);
    return "s3cret";
  };
  const c = parseMcpConfigText(WORKSPACE_JSONC, "/ws/.vscode/mcp.json");
  const cache = new Map<string, string>();
  const cachedAsk = async (d: McpInputDef) => {
    if (!cache.has(d.id)) cache.set(d.id, (await askInput(d))!);
    return cache.get(d.id);
  };
  const r = await resolveMcpServers([{ kind: "workspace", origin: "/ws/.vscode/mcp.json", config: c }], {
    workspaceFolder: "/ws",
    env: { MY_HOME: "/home/me" },
    askInput: cachedAsk,
  });
  assert.deepEqual(r.problems, []);
  const fs = r.servers.find((s) => s.name === "fs")!;
  assert.equal(fs.type, "stdio");
  if (fs.type !== "stdio") throw new Error();
  assert.deepEqual(fs.args, ["-y", "@modelcontextprotocol/server-filesystem", "/ws/src"]);
  assert.deepEqual(fs.env, { TOKEN: "s3cret", HOME_DIR: "/home/me", N: "3" });
  assert.equal(fs.cwd, "/ws");
  const remote = r.servers.find((s) => s.name === "remote")!;

  if (remote.type !== "http") throw new Error();
  assert.equal(remote.headers.Authorization, "Bearer s3cret");
  assert.equal(r.servers.find((s) => s.name === "legacy-sse")!.type, "sse");
  assert.equal(asked, 1, "an input is asked once");
  assert.equal(await resolveString("${unknownVar} ${env:NOPE}x", { env: {} }), "${unknownVar} x");
});

test("a declined input skips only that server", async () => {
  const c = parseMcpConfigText(WORKSPACE_JSONC);
  const r = await resolveMcpServers([{ kind: "workspace", origin: "w", config: c }], { workspaceFolder: "/ws", env: {}, askInput: async () => undefined });
  assert.deepEqual(r.skipped.sort(), ["fs", "remote"]);
  assert.deepEqual(r.servers.map((s) => s.name), ["legacy-sse"]);
});

test("merge order: user < settings < workspace; invalid entries are problems", async () => {
  const user = parseMcpConfigText('{"servers": {"a": {"command": "from-user"}, "u": {"command": "u"}, "bad": {"type": "stdio"}}}', "user");
  const settings = fromObject({ servers: { a: { command: "from-settings" }, s: { url: "ftp://x" } } }, "settings");
  const ws = parseMcpConfigText('{"servers": {"a": {"command": "from-ws"}}}', "ws");
  const r = await resolveMcpServers(
    [
      { kind: "workspace", origin: "ws", config: ws },
      { kind: "user", origin: "user", config: user },
      { kind: "settings", origin: "settings", config: settings },
    ],
    { workspaceFolder: "/w", env: {} },
  );
  const a = r.servers.find((s) => s.name === "a")!;
  assert.equal(a.type === "stdio" && a.command, "from-ws");
  assert.equal(r.origins.a, "ws");
  assert.ok(r.servers.find((s) => s.name === "u"));
  assert.ok(r.problems.some((p) => /bad.*command/.test(p.message)), JSON.stringify(r.problems));
  assert.ok(r.problems.some((p) => /s.*url/.test(p.message)));
});

test("envFile is read (dotenv) and env overrides it", async () => {
  const c = parseMcpConfigText('{"servers": {"a": {"command": "x", "envFile": "${workspaceFolder}/.env", "env": {"B": "env"}}}}');
  const r = await resolveMcpServers([{ kind: "workspace", origin: "w", config: c }], { workspaceFolder: "/w", env: {} }, (p) => {
    assert.equal(p, "/w/.env");
    return "A=1\n# comment\nB=file\nexport C=\"q v\"\n";
  });
  const a = r.servers[0]!;
  assert.ok(a.type === "stdio");
  if (a.type === "stdio") assert.deepEqual(a.env, { A: "1", B: "env", C: "q v" });
  assert.deepEqual(parseDotenv("X=1 # c\n"), { X: "1" });
});

test("user mcp.json path from globalStorage; ACP stdio/http entries", () => {
  assert.equal(userMcpJsonPath("/home/u/.config/Code/User/globalStorage/openvaala.openvaala"), "/home/u/.config/Code/User/mcp.json");
  assert.equal(userMcpJsonPath("/c/User/profiles/abc/globalStorage/openvaala.openvaala"), "/c/User/profiles/abc/mcp.json");
  assert.deepEqual(toAcpMcpServer({ type: "stdio", name: "a", command: "c", args: ["x"], env: { K: "v" } }), { name: "a", command: "c", args: ["x"], env: [{ name: "K", value: "v" }] });
  assert.deepEqual(toAcpMcpServer({ type: "http", name: "h", url: "http://x", headers: {} }), { type: "http", name: "h", url: "http://x", headers: [] });
});

test("config problems: wrong shapes are reported, not thrown; a syntax error names its line", () => {
  assert.deepEqual(fromObject([], "s").problems.map((p) => p.message), ["the top level must be an object"], "an array at the top is a problem");
  assert.deepEqual(fromObject("x", "s").problems.map((p) => p.message), ["the top level must be an object"], "a string at the top is a problem");
  assert.deepEqual(fromObject(null, "s"), { servers: {}, inputs: [], problems: [] }, "nothing is an empty config");
  assert.deepEqual(parseMcpConfigText("", "empty.json"), { servers: {}, inputs: [], problems: [] }, "an empty file is an empty config");
  for (const servers of [[], "x"]) assert.deepEqual(fromObject({ servers }, "s").problems.map((p) => p.message), ['"servers" must be an object'], `servers=${JSON.stringify(servers)} is a problem`);
  const inputs = fromObject({ inputs: [{ id: "ok", type: "promptString" }, { type: "promptString" }, null, 3] }, "s");
  assert.deepEqual(inputs.inputs.map((i) => i.id), ["ok"], "inputs with an id are kept");
  assert.equal(inputs.problems.filter((p) => p.message === 'an input needs an "id"').length, 3, "each input without an id is a problem");
  assert.deepEqual(fromObject({ inputs: "x" }, "s").problems, [], "a non-list of inputs is ignored");
  const bad = parseMcpConfigText('{\n"a": 1,\n"b": }', "f.json");
  assert.equal(bad.problems[0]!.line, 3, "the syntax error's line is counted from 1");
  assert.equal(bad.problems[0]!.offset, 15, "and its offset kept");
  assert.match(bad.problems[0]!.message, /^JSON syntax error: ValueExpected$/, "the error is named");
  assert.equal(parseMcpConfigText("[1]", "arr.json").problems[0]!.source, "arr.json", "problems carry their source");
});

test("variables: folder name, home, separators; a folder variable outside a folder or an input nobody can answer skips the server", async () => {
  const ctx = { workspaceFolder: "/w/proj", userHome: "/home/me", env: {} };
  assert.equal(await resolveString("${workspaceFolderBasename}|${userHome}|${pathSeparator}|${/}", ctx), `proj|/home/me|${path.sep}|${path.sep}`, "folder name, home and separators resolve");
  assert.equal(await resolveString("${userHome}", { env: {} }), os.homedir(), "home defaults to the user's home");
  assert.equal(await resolveString("a${env:A}b${env:B}c", { env: { A: "1" } }), "a1bc", "env variables resolve, unset ones to empty");
  assert.equal(await resolveString("no vars", { env: {} }), "no vars");
  const saved = process.env.OV_MCP_T;
  process.env.OV_MCP_T = "from-process";
  try {
    assert.equal(await resolveString("${env:OV_MCP_T}", {}), "from-process", "without an env, the process environment is used");
  } finally {
    if (saved === undefined) delete process.env.OV_MCP_T;
    else process.env.OV_MCP_T = saved;
  }
  await assert.rejects(resolveString("${workspaceFolder}", { env: {} }), /\$\{workspaceFolder\} used outside a workspace folder/);
  await assert.rejects(resolveString("${workspaceFolderBasename}", { env: {} }), /\$\{workspaceFolderBasename\} used outside a workspace folder/);
  await assert.rejects(resolveString("${input:k}", { env: {} }), /no way to ask for \$\{input:k\}/);
  await assert.rejects(resolveString("${input:k}", { env: {}, askInput: async () => undefined }), /no value given for \$\{input:k\}/);
  const asked: unknown[] = [];
  const v = await resolveString("${input:k} ${input:undeclared}", { env: {}, inputs: [{ id: "k", type: "pickString", description: "Pick", options: ["a"] }], askInput: async (d) => (asked.push(d), "v") });
  assert.equal(v, "v v");
  assert.deepEqual(asked, [{ id: "k", type: "pickString", description: "Pick", options: ["a"] }, { id: "undeclared", type: "promptString" }], "the input's declaration is passed to the question; an undeclared input is a plain prompt");
  const r = await resolveMcpServers([{ kind: "workspace", origin: "w", config: fromObject({ servers: { a: { command: "${workspaceFolder}/x" }, b: { command: "y" } } }, "w") }], { env: {} });
  assert.deepEqual(r.servers.map((s) => s.name), ["b"], "a server with an unresolvable variable is left out");
  assert.deepEqual(r.skipped, ["a"], "it counts as skipped");
  assert.match(r.problems[0]!.message, /workspaceFolder/, "the unresolvable variable is a problem");
  assert.equal(r.problems[0]!.source, "w", "named after its source");
});

test("server entries: defaults, types and validation", async () => {
  const resolve = (raw: unknown, ctx = { workspaceFolder: "/w", env: {} }) => resolveServer("n", raw, ctx, () => "");
  assert.deepEqual(await resolve({ command: "c", args: ["a", 1, true], env: { X: 1, Y: null } }), { type: "stdio", name: "n", command: "c", args: ["a", "1", "true"], env: { X: "1" }, envFile: undefined, cwd: "/w" }, "a stdio server: args and env as strings, null env values dropped, cwd the folder");
  assert.deepEqual(await resolve({ command: "c", args: "not a list", cwd: "/elsewhere" }), { type: "stdio", name: "n", command: "c", args: [], env: {}, envFile: undefined, cwd: "/elsewhere" }, "args that are not a list are none; an explicit cwd wins");
  assert.equal((await resolve({ command: "c" }, { env: {} } as never) as { cwd?: string }).cwd, undefined, "outside a folder no cwd is set");
  assert.equal(((await resolve({ command: "c", cwd: "" })) as { cwd?: string }).cwd, "/w", "an empty cwd is the folder");
  assert.deepEqual(await resolve({ url: "https://x/mcp", headers: { A: "b", N: 2 } }), { type: "http", name: "n", url: "https://x/mcp", headers: { A: "b", N: "2" } }, "a url means http; header values as strings");
  assert.deepEqual(await resolve({ type: "sse", url: "http://x/sse" }), { type: "sse", name: "n", url: "http://x/sse", headers: {} }, "sse servers keep their type");
  for (const [raw, msg] of [
    [null, 'server "n": must be an object'],
    [[], 'server "n": must be an object'],
    ["x", 'server "n": must be an object'],
    [{ type: "stdio" }, 'server "n": "command" is required for a stdio server'],
    [{ command: "" }, 'server "n": "command" is required for a stdio server'],
    [{ command: 3 }, 'server "n": "command" is required for a stdio server'],
    [{ type: "http", url: "ftp://x" }, 'server "n": "url" must be an http(s) URL'],
    [{ type: "sse" }, 'server "n": "url" must be an http(s) URL'],
    [{ type: "http", url: "see http://x" }, 'server "n": "url" must be an http(s) URL'],
    [{ type: "websocket", url: "ws://x" }, 'server "n": unknown type "websocket" (expected stdio, http or sse)'],
  ] as const) {
    await assert.rejects(resolve(raw), (e: Error) => e.message === msg, `${JSON.stringify(raw)}: ${msg}`);
  }
  assert.deepEqual(toAcpMcpServer({ type: "sse", name: "s", url: "http://x", headers: { A: "1" } }), { type: "sse", name: "s", url: "http://x", headers: [{ name: "A", value: "1" }] }, "sse entries for session/new");
  assert.deepEqual(toAcpMcpServer({ type: "stdio", name: "a", command: "c", args: [], env: {}, cwd: "/w" }), { name: "a", command: "c", args: [], env: [] }, "stdio entries carry name, command, args and env");
});

test("dotenv files: comments, export, quotes and escapes", () => {
  assert.deepEqual(
    parseDotenv([
      "# comment",
      "",
      "  A = 1  ",
      "export B=two words # trailing",
      'C="quoted # kept"',
      "D='single \\n kept'",
      'E="line\\nbreak \\"q\\""',
      "F=",
      "not a line",
      "1BAD=x",
      "G.H-I=ok",
      "J=#notcomment",
      "K='a",
    ].join("\r\n")),
    { A: "1", B: "two words", C: "quoted # kept", D: "single \\n kept", E: 'line\nbreak "q"', F: "", "G.H-I": "ok", J: "#notcomment", K: "'a" },
    "dotenv lines as editors read them",
  );
  assert.deepEqual(parseDotenv("X=a  # c"), { X: "a" }, "an unquoted value loses its trailing comment");
});

test("merging sources: inputs of every source are known; a later source wins; origins are kept", async () => {
  const user = fromObject({ inputs: [{ id: "tok", type: "promptString", description: "Token" }], servers: { a: { command: "u" } } }, "user");
  const ws = fromObject({ servers: { a: { command: "w", env: { T: "${input:tok}" } }, b: { command: "b" } } }, "ws");
  const asked: string[] = [];
  const r = await resolveMcpServers(
    [{ kind: "workspace", origin: "/w/.vscode/mcp.json", config: ws }, { kind: "user", origin: "/u/mcp.json", config: user }],
    { env: {}, askInput: async (d) => (asked.push(d.description ?? ""), "t") },
  );
  assert.deepEqual(asked, ["Token"], "an input declared in the user file is known to a workspace server");
  assert.deepEqual(r.origins, { a: "/w/.vscode/mcp.json", b: "/w/.vscode/mcp.json" }, "each server's origin is its winning source");
  const a = r.servers.find((s) => s.name === "a")!;
  assert.ok(a.type === "stdio" && a.command === "w" && a.env.T === "t", "the workspace entry wins over the user's");
  const withCtxInputs = await resolveMcpServers([{ kind: "settings", origin: "settings", config: fromObject({ servers: { c: { command: "${input:x}" } } }, "settings") }], { env: {}, inputs: [{ id: "x", type: "promptString", description: "From ctx" }], askInput: async (d) => d.description });
  assert.equal((withCtxInputs.servers[0] as { command: string }).command, "From ctx", "inputs given by the caller are known too");
  const problems = await resolveMcpServers([{ kind: "user", origin: "u", config: { servers: {}, inputs: [], problems: [{ source: "u", message: "syntax" }] } }], { env: {} });
  assert.deepEqual(problems.problems, [{ source: "u", message: "syntax" }], "parse problems of each source are reported");
});

test("reading mcp.json files: a missing file is no config", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ovmcp-"));
  assert.equal(readMcpConfigFile(path.join(dir, "missing.json")), undefined, "a missing file is no config");
  fs.writeFileSync(path.join(dir, "mcp.json"), '{"servers": {"x": {"command": "y"}}}');
  assert.deepEqual(Object.keys(readMcpConfigFile(path.join(dir, "mcp.json"))!.servers), ["x"], "an existing file is read");
  assert.equal(readMcpConfigFile(path.join(dir, "mcp.json"))!.problems.length, 0);
  fs.writeFileSync(path.join(dir, "bad.json"), "{");
  assert.equal(readMcpConfigFile(path.join(dir, "bad.json"))!.problems[0]!.source, path.join(dir, "bad.json"), "problems name the file");
});
