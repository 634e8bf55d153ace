// The JSON-RPC traffic of a connection, line by line, for bug reports ("OpenVaala: Show ACP
// Traffic"). Secret-bearing values (the env and headers of MCP servers and terminals) are masked;
// nothing else is. No `vscode` import.

export type TrafficDirection = "send" | "recv";

const MASK = "***";
/** fields whose values may hold keys: `[{ name, value }]` lists or `{ NAME: value }` maps */
const SECRET_FIELDS = new Set(["env", "headers"]);

function maskEntries(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((e) => (e && typeof e === "object" && "value" in e ? { ...e, value: MASK } : e));
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).map((k) => [k, MASK]));
  return v;
}

function mask(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(mask);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_FIELDS.has(k) ? maskEntries(x) : mask(x)]));
}

/** a line that is not JSON (never expected): every `"value"` and every string of an `"env"` map is masked */
function maskText(line: string): string {
  return line
    .replace(/("value"\s*:\s*)"(?:[^"\\]|\\.)*"/g, `$1"${MASK}"`)
    .replace(/("env"\s*:\s*\{)([^{}]*)\}/g, (_m, head: string, body: string) => `${head}${body.replace(/(:\s*)"(?:[^"\\]|\\.)*"/g, `$1"${MASK}"`)}}`);
}

/** one message of the traffic with the values of `env` and `headers` masked */
export function redactTraffic(line: string): string {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return maskText(line);
  }
  return JSON.stringify(mask(message));
}

/** Splits a byte stream into lines and hands each (redacted) line to `sink`. */
export function lineTap(direction: TrafficDirection, sink: (direction: TrafficDirection, line: string) => void): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) sink(direction, redactTraffic(l));
    },
    flush() {
      if (pending.trim()) sink(direction, redactTraffic(pending));
    },
  });
}

/** Hands each JSON-RPC message (redacted) to `sink`: the tap for transports that carry messages, not lines. */
export function messageTap<M>(direction: TrafficDirection, sink: (direction: TrafficDirection, line: string) => void): TransformStream<M, M> {
  return new TransformStream({
    transform(message, controller) {
      controller.enqueue(message);
      sink(direction, redactTraffic(JSON.stringify(message)));
    },
  });
}
