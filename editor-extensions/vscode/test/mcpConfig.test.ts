import { test } from "node:test";
import assert from "node:assert/strict";
import { parseMcpConfigText, resolveMcpServers, resolveString, parseDotenv, fromObject, userMcpJsonPath, toAcpMcpServer, type McpInputDef } from "../src/core/mcpConfig.js";

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
