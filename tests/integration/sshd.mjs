// A real OpenSSH server on 127.0.0.1 for the executor tests: `/usr/sbin/sshd -D` with a
// throw-away host key, a throw-away user key for the agent, logging into a dedicated user
// (created when missing: these machines run the tests as root) whose home and working directory
// are not the test's, so a test can tell which machine a file came from.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { scenario, sleep } from "./harness.mjs";
import { freePort } from "../fixtures/mcp/everything.mjs";

export { freePort };

export const SSHD = "/usr/sbin/sshd";
export const TEST_USER = "ovtest";

export function sshdSkipReason() {
  if (!fs.existsSync(SSHD)) return `${SSHD} not installed (apt-get install openssh-server; scripts/install-deps.sh)`;
  if (process.getuid() !== 0) return "the sshd fixture creates a test user: run as root";
  return false;
}

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...opts });
}

export function ensureTestUser(user = TEST_USER) {
  // Under flock: test files run in parallel, and two useradd/usermod at once fail on the
  // /etc/passwd lock or on a user the other one just made.
  // '*': no password, but not locked ('!'): with UsePAM no, sshd refuses locked accounts.
  sh("flock", [path.join(os.tmpdir(), "openvaala-test-user.lock"), "sh", "-c",
    'id -u "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash "$1"; usermod -p "*" "$1"', "sh", user]);
  const home = sh("getent", ["passwd", user]).split(":")[5];
  const uid = Number(sh("id", ["-u", user]).trim());
  const gid = Number(sh("id", ["-g", user]).trim());
  return { user, home, uid, gid };
}

function keygen(file) {
  sh("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "openvaala-test", "-f", file]);
  return fs.readFileSync(`${file}.pub`, "utf8").trim();
}

// Resolves once sshd listens on `port`; false when it exited first (the port was taken between
// freePort and its bind: another test file's server got it). sshd writes its pid file once it
// listens, so a connection before that may be to whoever took the port.
async function waitForPort(port, proc, pidFile, ms = 20000) {
  let exited = false;
  proc.once("exit", () => (exited = true));
  const t0 = Date.now();
  for (;;) {
    const ok = fs.existsSync(pidFile) && await new Promise((resolve) => {
      const c = net.connect(port, "127.0.0.1", () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (ok) return true;
    if (exited) return false;
    if (Date.now() - t0 > ms) throw new Error(`sshd did not listen on 127.0.0.1:${port} within ${ms} ms`);
    await sleep(50);
  }
}

/**
 * Starts sshd. `pathDirs` replaces the PATH of the sessions (SetEnv), to simulate a host without
 * bash or tar. Returns { port, user, remoteHome, workdir, clientDir, identityFile, knownHosts,
 * executorYaml(id, extra), processes(marker), close() }.
 */
/**
 * One sshd for the test file that calls this (started before its first test, closed after its
 * last): `sshd` forwards to the running fixture; `sshScenario` is a scenario skipped (with the
 * reason) where no sshd can run here.
 */
export function sshdForThisFile() {
  const skip = sshdSkipReason();
  let server = null;
  before(async () => {
    if (!skip) server = await startSshd();
  });
  after(async () => {
    if (server) await server.close();
  });
  const sshd = new Proxy({}, { get: (_target, key) => server?.[key] });
  const sshScenario = (name, fn, opts = {}) => scenario(name, fn, { timeout: 60000, ...opts, skip });
  return { sshd, sshScenario };
}

export async function startSshd(opts = {}) {
  for (let attempt = 1; ; attempt++) {
    const server = await startSshdOnce(opts);
    if (server || attempt === 5) return server ?? Promise.reject(new Error("sshd could not bind a free port 5 times"));
  }
}

// null when sshd exited before listening (its port was taken meanwhile).
async function startSshdOnce({ pathDirs = null } = {}) {
  const u = ensureTestUser();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-sshd-"));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const hostPub = keygen(path.join(dir, "host_key"));
  // The agent's side: its key and known_hosts, private to root.
  const clientDir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-ssh-client-"));
  const identityFile = path.join(clientDir, "id_ed25519");
  const userPub = keygen(identityFile);
  const knownHosts = path.join(clientDir, "known_hosts");
  fs.writeFileSync(knownHosts, `[127.0.0.1]:${port} ${hostPub.split(" ").slice(0, 2).join(" ")}\n`);
  fs.writeFileSync(path.join(dir, "authorized_keys"), userPub + "\n", { mode: 0o644 });
  fs.mkdirSync("/run/sshd", { recursive: true });
  const workdir = path.join(u.home, `work-${process.pid}-${port}`);
  fs.mkdirSync(workdir, { recursive: true });
  fs.chownSync(workdir, u.uid, u.gid);
  const config = [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${path.join(dir, "host_key")}`,
    `PidFile ${path.join(dir, "sshd.pid")}`,
    `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
    "StrictModes no",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "UsePAM no",
    `AllowUsers ${u.user}`,
    "MaxSessions 64",
    "MaxStartups 64",
    "LogLevel ERROR",
    ...(pathDirs ? [`SetEnv PATH=${pathDirs.join(":")}`] : []),
  ].join("\n");
  fs.writeFileSync(path.join(dir, "sshd_config"), config + "\n");
  const proc = spawn(SSHD, ["-D", "-e", "-f", path.join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
  let staged = null;  // the folder nodeCommand copies into, made on first use
  let log = "";
  proc.stderr.on("data", (d) => (log += d.toString()));
  if (!(await waitForPort(port, proc, path.join(dir, "sshd.pid")))) {
    for (const d of [dir, clientDir, workdir]) fs.rmSync(d, { recursive: true, force: true });
    return null;
  }

  const fixture = {
    port,
    user: u.user,
    uid: u.uid,
    gid: u.gid,
    remoteHome: u.home,
    workdir,
    identityFile,
    knownHosts,
    get log() {
      return log;
    },
    /** executors/<id>.yaml for this server; `extra` lines override or add fields */
    executorYaml(id, extra = "") {
      return (
        `id: ${id}\ntype: ssh\nhost: 127.0.0.1\nport: ${port}\nuser: ${u.user}\n` +
        `identity_file: ${identityFile}\n` +
        `ssh_options: [UserKnownHostsFile=${knownHosts}, IdentitiesOnly=yes]\n` +
        `workdir: ${workdir}\n` +
        extra
      );
    },
    /** writes a file on the "remote" machine, owned by the test user */
    writeRemote(rel, text) {
      const f = path.join(workdir, rel);
      fs.mkdirSync(path.dirname(f), { recursive: true });
      fs.writeFileSync(f, text);
      fs.chownSync(f, u.uid, u.gid);
      return f;
    },
    /**
     * A command and args that run the Node script `script` (no dependencies) on this "remote" as the
     * test user, with the Node that runs these tests (the repository's: the remote user's `node` may
     * be Debian's 18). Each is copied to a folder that user can read when it cannot reach it where it
     * is (a repository under /root, which is 0700).
     */
    nodeCommand(script) {
      if (!staged) {
        staged = fs.mkdtempSync(path.join(os.tmpdir(), "ov-remote-node-"));
        fs.chmodSync(staged, 0o755);
      }
      const reachable = (file, mode) => spawnSync("test", [mode, file], { uid: u.uid, gid: u.gid }).status === 0;
      const stage = (file, mode) => {
        const to = path.join(staged, path.basename(file));
        if (!fs.existsSync(to)) fs.copyFileSync(file, to);
        fs.chmodSync(to, mode);
        return to;
      };
      const node = fs.realpathSync(process.execPath);
      return {
        command: reachable(node, "-x") ? node : stage(node, 0o755),
        args: [reachable(script, "-r") ? script : stage(script, 0o644)],
      };
    },
    /** the test user's processes whose command line contains `marker` (ps, as that user) */
    processes(marker) {
      let out = "";
      try {
        out = sh("ps", ["-u", u.user, "-o", "pid=,args="]);
      } catch {
        return [];
      }
      return out
        .split("\n")
        .filter((l) => l.includes(marker) && !l.includes("ps -u") && !l.includes("<defunct>"))  // zombies run nothing
        .map((l) => Number(l.trim().split(/\s+/)[0]));
    },
    async close() {
      try {
        proc.kill("SIGTERM");
      } catch {
        /* gone */
      }
      await Promise.race([new Promise((r) => proc.once("exit", r)), sleep(2000)]);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(clientDir, { recursive: true, force: true });
      fs.rmSync(workdir, { recursive: true, force: true });
      if (staged) fs.rmSync(staged, { recursive: true, force: true });
    },
  };
  return fixture;
}
