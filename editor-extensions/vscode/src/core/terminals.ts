// ACP `terminal/*` on the editor's machine: real child processes (own process group), output kept
// up to a byte limit (truncated from the front on a UTF-8 boundary), with listeners so the VS Code
// glue can mirror the output into a pseudoterminal. No `vscode` import.
import { spawn, type ChildProcess } from "node:child_process";
import type * as acp from "@agentclientprotocol/sdk";

export const DEFAULT_OUTPUT_LIMIT = 1024 * 1024;

export interface TerminalListener {
  onCreate?(t: ManagedTerminal): void;
  onData?(t: ManagedTerminal, chunk: string): void;
  onExit?(t: ManagedTerminal, status: acp.TerminalExitStatus): void;
  onRelease?(t: ManagedTerminal): void;
}

export class ManagedTerminal {
  readonly proc: ChildProcess;
  private buf: Buffer = Buffer.alloc(0);
  truncated = false;
  exitStatus: acp.TerminalExitStatus | null = null;
  released = false;
  readonly exited: Promise<acp.TerminalExitStatus>;
  readonly commandLine: string;

  constructor(
    readonly id: string,
    readonly params: acp.CreateTerminalRequest,
    readonly limit: number,
    private readonly listener: TerminalListener,
    defaultCwd: string | undefined,
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of params.env ?? []) env[e.name] = e.value;
    const args = params.args ?? [];
    this.commandLine = [params.command, ...args].join(" ");
    // no args: the command is a shell command line (what agents send for `bash`-style tools)
    this.proc = spawn(params.command, args, {
      cwd: params.cwd ?? defaultCwd,
      env,
      shell: args.length === 0,
      stdio: ["ignore", "pipe", "pipe"],
      detached: process.platform !== "win32",
      windowsHide: true,
    });
    this.exited = new Promise((resolve) => {
      this.proc.once("error", (e) => {
        this.append(Buffer.from(`${params.command}: ${e.message}\n`));
        this.finish({ exitCode: 127, signal: null }, resolve);
      });
      this.proc.once("close", (code, signal) => this.finish({ exitCode: code, signal: signal ?? null }, resolve));
    });
    this.proc.stdout?.on("data", (d: Buffer) => this.append(d));
    this.proc.stderr?.on("data", (d: Buffer) => this.append(d));
  }

  private finish(status: acp.TerminalExitStatus, resolve: (s: acp.TerminalExitStatus) => void) {
    if (!this.exitStatus) {
      this.exitStatus = status;
      this.listener.onExit?.(this, status);
    }
    resolve(this.exitStatus);
  }

  private append(d: Buffer) {
    this.buf = Buffer.concat([this.buf, d]);
    if (this.buf.length > this.limit) {
      let start = this.buf.length - this.limit;
      while (start < this.buf.length && (this.buf[start]! & 0xc0) === 0x80) start++;
      this.buf = this.buf.subarray(start);
      this.truncated = true;
    }
    this.listener.onData?.(this, d.toString("utf8"));
  }

  get output(): string {
    return this.buf.toString("utf8");
  }

  get running(): boolean {
    return this.exitStatus === null;
  }

  kill(): void {
    if (!this.running || this.proc.pid === undefined) return;
    try {
      if (process.platform === "win32") this.proc.kill();
      else process.kill(-this.proc.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

/** how many released terminals keep their output on screen (ACP: released output stays displayed) */
export const RETAINED_RELEASED = 50;

export class TerminalManager {
  private readonly terminals = new Map<string, ManagedTerminal>();
  private readonly releasedTerminals: ManagedTerminal[] = [];
  private counter = 0;
  readonly listeners = new Set<TerminalListener>();

  constructor(private readonly defaultCwd?: string) {}

  private get fanout(): TerminalListener {
    return {
      onCreate: (t) => this.listeners.forEach((l) => l.onCreate?.(t)),
      onData: (t, c) => this.listeners.forEach((l) => l.onData?.(t, c)),
      onExit: (t, s) => this.listeners.forEach((l) => l.onExit?.(t, s)),
      onRelease: (t) => this.listeners.forEach((l) => l.onRelease?.(t)),
    };
  }

  get(id: string): ManagedTerminal {
    const t = this.terminals.get(id);
    if (!t) throw Object.assign(new Error(`unknown terminal ${id}`), { code: -32002 });
    return t;
  }

  all(): ManagedTerminal[] {
    return [...this.terminals.values()];
  }

  /** live terminals and the most recently released ones, whose output the chat keeps showing */
  shown(): ManagedTerminal[] {
    return [...this.releasedTerminals, ...this.terminals.values()];
  }

  create(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    const id = `term-${++this.counter}`;
    const limit = params.outputByteLimit != null && params.outputByteLimit >= 0 ? Number(params.outputByteLimit) : DEFAULT_OUTPUT_LIMIT;
    const fan = this.fanout;
    const t = new ManagedTerminal(id, params, limit, fan, this.defaultCwd);
    this.terminals.set(id, t);
    fan.onCreate?.(t);
    return { terminalId: id };
  }

  output(params: acp.TerminalOutputRequest): acp.TerminalOutputResponse {
    const t = this.get(params.terminalId);
    const r: acp.TerminalOutputResponse = { output: t.output, truncated: t.truncated };
    if (t.exitStatus) r.exitStatus = t.exitStatus;
    return r;
  }

  async waitForExit(params: acp.WaitForTerminalExitRequest, signal?: AbortSignal): Promise<acp.WaitForTerminalExitResponse> {
    const t = this.get(params.terminalId);
    const aborted = new Promise<never>((_, reject) => {
      signal?.addEventListener("abort", () => reject(new Error("cancelled")), { once: true });
    });
    const s = await (signal ? Promise.race([t.exited, aborted]) : t.exited);
    return { exitCode: s.exitCode ?? null, signal: s.signal ?? null };
  }

  kill(params: acp.KillTerminalRequest): acp.KillTerminalResponse {
    this.get(params.terminalId).kill();
    return {};
  }

  release(params: acp.ReleaseTerminalRequest): acp.ReleaseTerminalResponse {
    const t = this.get(params.terminalId);
    t.kill();
    t.released = true;
    this.terminals.delete(params.terminalId);
    this.releasedTerminals.push(t);
    if (this.releasedTerminals.length > RETAINED_RELEASED) this.releasedTerminals.shift();
    this.fanout.onRelease?.(t);
    return {};
  }

  disposeAll(): void {
    for (const t of this.terminals.values()) t.kill();
    this.terminals.clear();
    this.releasedTerminals.length = 0;
  }
}
