// One `openvaala acp` taken to just after `session/new` (its answer and the session's first
// available_commands_update), raw NDJSON on the pipes: the state whose memory
// bench/rss_breakdown.mjs reads and whose code bench/startup_order.mjs lists.
import { spawn } from "node:child_process";
import readline from "node:readline";
import { agentEnv, makeConfigHome, makeWorkspace, startFakeModel } from "../tests/integration/harness.mjs";

/** { child, close() } once session/new is answered and the commands arrived (`prefix`: e.g. valgrind's argv). */
export async function startedSession(bin, { prefix = [] } = {}) {
  const fake = await startFakeModel();
  const home = makeConfigHome({ modelUrl: fake.url });
  const ws = makeWorkspace({ "a.txt": "a\n" });
  const [cmd, ...args] = [...prefix, bin, "acp"];
  const child = spawn(cmd, args, { env: agentEnv(home.env), cwd: ws, stdio: ["pipe", "pipe", "ignore"] });
  const waiters = new Map();
  let commandsArrived;
  const commands = new Promise((r) => (commandsArrived = r));
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const m = JSON.parse(line);
    if (m.id !== undefined && waiters.has(m.id)) waiters.get(m.id)(m);
    if (m.params?.update?.sessionUpdate === "available_commands_update") commandsArrived();
  });
  const request = (id, method, params) =>
    new Promise((r) => {
      waiters.set(id, r);
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  await request(1, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  const created = await request(2, "session/new", { cwd: ws, mcpServers: [] });
  if (!created.result) throw new Error(`session/new failed: ${JSON.stringify(created)}`);
  await commands;
  return {
    child,
    async close() {
      child.stdin.end();
      await new Promise((r) => child.once("exit", r));
      await fake.close();
    },
  };
}
