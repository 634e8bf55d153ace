// Container executors (DESIGN §10, issue 37.2) through a real podman (runc, cgroupfs; set up by
// scripts/podman-test-env.sh with an image built from a local debootstrap root): a session whose
// tools and hooks run in a container, exec'd into (a running one, as a user of its own) or
// started from an image for the server (removed when the server ends, SIGKILL too); a dev
// container folder; what cancel leaves in the container (nothing); faults that name the executor
// and the container or engine while local tools keep working; `config check --executor`.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { before } from "node:test";
import {
  scenario, agentBinary, agentEnv, assertProcessesGone, executorFiles, lastToolResult, writeFiles,
} from "./harness.mjs";

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const IMAGE = "localhost/openvaala-test:1";

function podmanSkipReason() {
  if (process.getuid() !== 0) return "the podman set-up is tested as root";
  // scripts/debian-clean-check.sh runs the tests in a chroot, where runc's containers do not see
  // their own mounts (a chdir into a bind mount, `exec -u` of a user added inside fail): podman
  // needs a real machine's mount namespace. The check sets this; it proves podman's set-up there.
  if (process.env.OPENVAALA_IN_CHROOT === "1") return "in the clean-root check's chroot: podman's containers need a real machine's mount namespace";
  if (!fs.existsSync("/usr/bin/podman")) return "podman not installed (scripts/install-deps.sh installs it)";
  return false;
}
const skip = podmanSkipReason();

before(() => {
  if (skip) return;
  // CONTAINERS_CONF and CONTAINERS_STORAGE_CONF: the tests' own podman set-up (the image too).
  const out = execFileSync(path.join(REPO, "scripts/podman-test-env.sh"), { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  for (const m of out.matchAll(/^export (\w+)=(.*)$/gm)) process.env[m[1]] = m[2].replace(/^'(.*)'$/, "$1");
});

const podman = (...args) => execFileSync("podman", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const containersOf = (label) => podman("ps", "-a", "-q", "--filter", `label=${label}`).split("\n").filter(Boolean);
/** Processes in a container whose command line contains `needle` (the image has no ps). */
function processesIn(container, needle) {
  const r = spawnSync("podman", ["exec", container, "sh", "-c",
    'for p in /proc/[0-9]*; do c=$(tr "\\0" " " < $p/cmdline 2>/dev/null); echo "${p#/proc/} $c"; done'], { encoding: "utf8" });
  return r.stdout.split("\n").filter((l) => l.includes(needle) && !l.includes("/proc/["));
}

/** A running container of the test image, removed when the scenario ends. */
function runningContainer(ctx) {
  const name = `ov-test-${crypto.randomBytes(4).toString("hex")}`;
  podman("run", "-d", "--init", "--name", name, "--entrypoint", "sleep", IMAGE, "infinity");
  ctx.containers = [...(ctx.containers ?? []), name];
  return name;
}

const setUp = (ctx, { script, executors = {}, files = {}, hooks = {} }) =>
  ctx.setup({ script, files: { "where.txt": "local\n", ...files }, configFiles: { ...executorFiles(executors), ...hooks } });

const call = (id, name, args) => ({ toolCalls: [{ id, name, arguments: args }] });

/** Scenario that removes the containers it started, whatever happened. */
function containerScenario(name, fn, opts = {}) {
  scenario(name, async (ctx, t) => {
    try {
      await fn(ctx, t);
    } finally {
      for (const c of ctx.containers ?? []) spawnSync("podman", ["rm", "-f", "-t", "0", c]);
    }
  }, { timeout: 120000, skip, ...opts });
}

containerScenario("exec into a running container as its user: read, patch and bash run there; the patched file keeps its owner; a hook runs there", async (ctx) => {
  const box = runningContainer(ctx);
  podman("exec", box, "sh", "-c", "useradd -m dev && mkdir -p /srv/app && printf 'in the container\\n' > /srv/app/where.txt && chown -R dev /srv/app");
  const patch = "*** Begin Patch\n*** Update File: where.txt\n@@\n-in the container\n+patched in the container\n*** End Patch";
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: `type: container\ncontainer: ${box}\nuser: dev\nworkdir: /srv/app\nenv: {OV_MARK: set-by-executor}\n` },
    hooks: {
      "hooks/mark.yaml": "hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n          script: mark.sh\n",
      "hooks/mark.sh": "#!/bin/sh\ncat > /dev/null\necho \"hook ran as $(id -un) in $(pwd) on $(cat /etc/hostname)\" >> /tmp/hook.log\n",
    },
    script: [
      call("c_read", "read_file", { path: "where.txt" }),
      call("c_patch", "apply_patch", { patch }),
      call("c_bash", "bash", { command: "cat where.txt; pwd; id -un; cat /etc/hostname; echo; echo \"env=$OV_MARK\"" }),
      { text: "done" },
    ],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  assert.equal((await h.prompt(sessionId, "work in the container")).stopReason, "end_turn");
  assert.match(lastToolResult(fake, "c_read"), /^in the container\n?$/, "read_file read the container's file, not the local one");
  assert.equal(podman("exec", box, "cat", "/srv/app/where.txt"), "patched in the container\n", "the patch changed the container's file");
  assert.equal(podman("exec", box, "stat", "-c", "%U", "/srv/app/where.txt").trim(), "dev", "written as the executor's user: the owner stays");
  assert.equal(fs.readFileSync(path.join(ws, "where.txt"), "utf8"), "local\n", "the local file is untouched");
  const hostname = podman("exec", box, "cat", "/etc/hostname").trim();
  const out = lastToolResult(fake, "c_bash");
  assert.match(out, /Exit code: 0/);
  assert.match(out, /\/srv\/app\n/, "bash ran in the executor's workdir");
  assert.match(out, /\ndev\n/, "bash ran as the executor's user");
  assert.ok(out.includes(hostname), `bash ran in the container (${hostname}): ${out}`);
  assert.match(out, /env=set-by-executor/, "the executor's env reaches commands run there");
  assert.match(podman("exec", box, "cat", "/tmp/hook.log"), new RegExp(`hook ran as dev in /srv/app on ${hostname}`),
    "the PreToolUse hook's script was copied into the container and ran there, as its user");
  assert.equal(h.requestsOf("terminal/create").length, 0, "nothing went through the editor's terminal");
  assert.match(podman("exec", box, "sh", "-c", "ls /home/dev/.cache/openvaala/bin/*/openvaala"), /openvaala\n/,
    "the helper was copied to the executor user's ~/.cache/openvaala/bin/<build-id>/ in the container");
  assert.equal(processesIn(box, "executor-helper").length, 1, "one helper serves every operation");
  assert.deepEqual(h.noticesOf(sessionId).filter((n) => /runs each operation as a command/.test(n)), [], "no fallback notice");
});

containerScenario("where the helper cannot be copied (a read-only ~/.cache), each operation is a command, and the user is told once", async (ctx) => {
  const readOnly = fs.mkdtempSync("/tmp/ov-rocache-");
  ctx.defer(() => fs.rmSync(readOnly, { recursive: true, force: true }));
  const { fake, ws, h } = await setUp(ctx, {
    executors: { img: `type: container\nimage: ${IMAGE}\nworkdir: /tmp\nmounts: ["${readOnly}:/root/.cache:ro"]\n` },
    script: [call("c_bash", "bash", { command: "echo works" }), call("c_read", "read_file", { path: "/etc/hostname" }), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "img" } } });
  assert.equal((await h.prompt(sessionId, "go")).stopReason, "end_turn");
  assert.match(lastToolResult(fake, "c_bash"), /works/);
  assert.ok(lastToolResult(fake, "c_read").trim().length > 0, "files are still read");
  const told = h.noticesOf(sessionId).filter((n) => /runs each operation as a command/.test(n));
  assert.equal(told.length, 1, `told once: ${JSON.stringify(h.noticesOf(sessionId))}`);
  assert.match(told[0], /cannot copy it there: .*Read-only file system/);
});

containerScenario("cancel mid-command leaves no process in the container, and the session goes on", async (ctx) => {
  const box = runningContainer(ctx);
  const marker = "sleep 424301";
  const { fake, ws, h } = await setUp(ctx, {
    executors: { box: `type: container\ncontainer: ${box}\nworkdir: /tmp\n` },
    script: [call("c_long", "bash", { command: `${marker}; echo never` })],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "box" } } });
  const turn = h.prompt(sessionId, "long").catch((e) => e);
  await h.waitUntil(() => processesIn(box, marker).length > 0, { timeout: 20000, label: "the command runs in the container" });
  await h.cancel(sessionId);
  assert.equal((await turn).stopReason, "cancelled");
  await assertProcessesGone(() => processesIn(box, marker), {
    within: 5000, promise: "after cancel, the command in the container is gone (killing the local podman exec alone leaves it)",
  });
  fake.push([call("c_next", "bash", { command: "echo still here" }), { text: "ok" }]);
  await h.prompt(sessionId, "again");
  assert.match(lastToolResult(fake, "c_next"), /still here/);
});

for (const how of ["session end (stdin closed)", "SIGKILL of the server"]) {
  containerScenario(`image mode: a container started for the server, the workspace mounted; removed at ${how}`, async (ctx) => {
    const mounted = ctx.workspace({ "from-host.txt": "mounted\n" });
    const { fake, ws, h } = await setUp(ctx, {
      executors: { img: `type: container\nimage: ${IMAGE}\nmounts: ["${mounted}:/workspace"]\nworkdir: /workspace\n` },
      script: [
        call("c_bash", "bash", { command: "cat from-host.txt; pwd; echo made-inside > made.txt; cat /etc/os-release | head -1" }),
        { text: "done" },
      ],
    });
    const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "img" } } });
    assert.equal((await h.prompt(sessionId, "work in a fresh container")).stopReason, "end_turn");
    const out = lastToolResult(fake, "c_bash");
    assert.match(out, /mounted\n\/workspace\n/, "the mount and workdir of the executor file");
    assert.equal(fs.readFileSync(path.join(mounted, "made.txt"), "utf8"), "made-inside\n", "written inside, through the mount");
    const label = `openvaala.server=${h.pid}`;
    assert.equal(containersOf(label).length, 1, "one container, labelled with the server");
    if (how.startsWith("SIGKILL")) process.kill(h.pid, "SIGKILL");
    else await h.close({ grace: 15000 });
    await assertProcessesGone(() => containersOf(label), {
      within: 15000, interval: 200, promise: `after ${how}, the container started for the server is removed`,
    });
  });
}

containerScenario("image mode: the container goes when the last session using it closes; the next session gets a fresh one", async (ctx) => {
  const { fake, ws, h } = await setUp(ctx, {
    executors: { img: `type: container\nimage: ${IMAGE}\nworkdir: /tmp\n` },
    script: [
      call("c_mark", "bash", { command: "echo here > /tmp/mark; cat /etc/hostname" }), { text: "one" },
      call("c_look", "bash", { command: "cat /tmp/mark 2>&1 || true" }), { text: "two" },
    ],
  });
  const label = `openvaala.server=${h.pid}`;
  const first = await h.newSession(ws, { _meta: { openvaala: { executor: "img" } } });
  const other = await h.newSession(ws, { _meta: { openvaala: { executor: "img" } } });
  await h.prompt(first.sessionId, "mark");
  const [box] = containersOf(label);
  assert.ok(box, "a container was started for the sessions");
  await h.request("session/close", { sessionId: first.sessionId });
  assert.deepEqual(containersOf(label), [box], "promise: a container another open session uses stays");
  await h.request("session/close", { sessionId: other.sessionId });
  await assertProcessesGone(() => containersOf(label), {
    within: 15000, interval: 200, promise: "after the last session using it closed, the container started for it is removed",
  });
  const next = await h.newSession(ws, { _meta: { openvaala: { executor: "img" } } });
  assert.equal((await h.prompt(next.sessionId, "look")).stopReason, "end_turn");
  assert.match(lastToolResult(fake, "c_look"), /No such file/, "a fresh container: the first one's files are gone");
  assert.equal(containersOf(label).length, 1);
});

containerScenario("devcontainer: the folder's devcontainer.json gives image, workspace mount, user and env", async (ctx) => {
  const project = ctx.workspace({
    "where.txt": "the project\n",
    ".devcontainer/devcontainer.json": JSON.stringify({
      image: IMAGE, workspaceFolder: "/workspaces/${localWorkspaceFolderBasename}", containerEnv: { APP_HOME: "${containerWorkspaceFolder}" },
    }),
  });
  const { fake, ws, h } = await setUp(ctx, {
    executors: { dev: `type: devcontainer\nfolder: ${project}\n` },
    script: [call("c_bash", "bash", { command: "cat where.txt; pwd; echo \"home=$APP_HOME\"" }), { text: "done" }],
  });
  const { sessionId } = await h.newSession(ws, { _meta: { openvaala: { executor: "dev" } } });
  assert.equal((await h.prompt(sessionId, "work in the dev container")).stopReason, "end_turn");
  const base = path.basename(project);
  const out = lastToolResult(fake, "c_bash");
  assert.ok(out.includes(`the project\n/workspaces/${base}\nhome=/workspaces/${base}`), out);
  await h.close({ grace: 15000 });
  await assertProcessesGone(() => containersOf(`openvaala.server=${h.pid}`), { within: 15000, interval: 200, promise: "its container is removed" });
});

containerScenario("a missing container or engine is a tool error naming the executor and the container or engine; local tools keep working", async (ctx) => {
  const { fake, ws, h } = await setUp(ctx, {
    executors: {
      gone: "type: container\ncontainer: ov-no-such-container\n",
      noengine: "type: container\nengine: docker\ncontainer: x\n",
    },
    script: [
      call("c_gone", "bash", { command: "echo hi", executor: "gone" }),
      call("c_engine", "read_file", { path: "/etc/hostname", executor: "noengine" }),
      call("c_local", "read_file", { path: "where.txt" }),
      { text: "done" },
    ],
  });
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "try them")).stopReason, "end_turn");
  assert.match(lastToolResult(fake, "c_gone"), /executor 'gone' \(container podman ov-no-such-container\): the container 'ov-no-such-container' does not exist/);
  // docker's CLI may be here without its daemon: either way the engine is named, not the container.
  assert.match(lastToolResult(fake, "c_engine"),
    /executor 'noengine' \(container docker x\): the container engine 'docker' (is not installed|cannot be used \(docker: .+\))/);
  assert.match(lastToolResult(fake, "c_local"), /local/, "a local tool still works");
});

containerScenario("config check --executor: the engine, the image, the container's working directory, or why not", async (ctx) => {
  const home = ctx.configHome({ modelUrl: "http://127.0.0.1:9" });
  writeFiles(home.configDir, {
    "executors/img.yaml": `type: container\nimage: ${IMAGE}\nworkdir: /tmp\n`,
    "executors/gone.yaml": "type: container\ncontainer: ov-no-such-container\n",
  });
  const run = (...args) => spawnSync(agentBinary(), ["config", "check", ...args], { env: agentEnv(home.env), encoding: "utf8" });
  const ok = run("--executor", "img");
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /^ {2}img {2}container {2}podman \(else docker\) {2}image localhost\/openvaala-test:1 {2}workdir \/tmp/m);
  assert.match(ok.stdout, /Executor img: reachable/);
  assert.match(ok.stdout, /working directory: \/tmp/);
  assert.match(ok.stdout, /bash: yes/);
  assert.match(ok.stdout, /helper: running \(~\/\.cache\/openvaala\/bin\/[0-9a-f]+\/openvaala there\): one stream for every operation/);
  assert.deepEqual(containersOf(`openvaala.server=${ok.pid}`), [], "the probe's container is removed");
  const gone = run("--executor", "gone");
  assert.equal(gone.status, 1);
  assert.match(gone.stdout, /Executor gone: not reachable\n {2}executor 'gone' \(container podman ov-no-such-container\): the container 'ov-no-such-container' does not exist/);
});

/** A stdio MCP server in bash (the image has no node): one tool, `where`, answering where it runs. */
const BASH_MCP_SERVER = `#!/bin/bash
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\\([0-9]*\\).*/\\1/p')
  [ -z "$id" ] && continue
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"box-mcp","version":"1"}}}\\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"where","description":"Where it runs","inputSchema":{"type":"object","properties":{}}}]}}\\n' "$id" ;;
    *'"method":"tools/call"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"mcp as %s in %s on %s"}]}}\\n' "$id" "$(id -un)" "$(pwd)" "$(cat /etc/hostname)" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\\n' "$id" ;;
  esac
done
`;

containerScenario("a session on a container sees the container's AGENTS.md and skills, and a stdio MCP server listing it runs inside", async (ctx) => {
  const box = runningContainer(ctx);
  podman("exec", box, "sh", "-c", "useradd -m dev && mkdir -p /srv/app/.agents/skills/box-skill && chown -R dev /srv/app");
  const put = (file, text) => execFileSync("podman", ["exec", "-i", "-u", "dev", box, "sh", "-c", `cat > ${file}`], { input: text });
  put("/srv/app/AGENTS.md", "CONTAINER-AGENTS-MARK: run the tests with make check\n");
  put("/srv/app/.agents/skills/box-skill/SKILL.md", "---\nname: box-skill\ndescription: A skill in the container\n---\nBody\n");
  put("/srv/app/mcp.sh", BASH_MCP_SERVER);
  const fake = await ctx.fakeModel([call("c_where", "mcp__boxmcp__where", {}), { text: "done" }]);
  const ws = ctx.workspace({ "AGENTS.md": "LOCAL-AGENTS-MARK\n" });
  const home = ctx.configHome({ modelUrl: fake.url, extraYaml: "default_executor: box\n" });
  writeFiles(home.configDir, {
    "executors/box.yaml": `type: container\ncontainer: ${box}\nuser: dev\nworkdir: /srv/app\n`,
    "mcp_servers/boxmcp.yaml": "id: boxmcp\ntype: stdio\ncommand: bash\nargs: [/srv/app/mcp.sh]\nexecutors: [box]\n",
  });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  assert.equal((await h.prompt(sessionId, "where")).stopReason, "end_turn");
  const sys = JSON.stringify(fake.requests[0].body);
  assert.match(sys, /CONTAINER-AGENTS-MARK/, "the container's AGENTS.md reaches the model");
  assert.ok(!sys.includes("LOCAL-AGENTS-MARK"), "the local AGENTS.md is not given while no tool ran on local");
  assert.ok(sys.includes("/srv/app/.agents/skills/box-skill/SKILL.md"), "the container's skill is offered, by its path there");
  const hostname = podman("exec", box, "cat", "/etc/hostname").trim();
  assert.equal(lastToolResult(fake, "c_where").trim(), `mcp as dev in /srv/app on ${hostname}`,
    "the MCP server listing the container runs inside it, as the executor's user, in its working directory");
});
