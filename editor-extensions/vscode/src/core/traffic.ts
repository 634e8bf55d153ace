// The JSON-RPC traffic of a connection, line by line, for bug reports ("OpenVaala: Show ACP
// Traffic"). Secret-bearing values (MCP server env and headers) are masked. No `vscode` import.

export type TrafficDirection = "send" | "recv";

/** `"value": "..."` of env/header entries and `"env": {...}` maps may hold keys: masked */
export function redactTraffic(line: string): string {
  return line
    .replace(/("value"\s*:\s*)"(?:[^"\\]|\\.)*"/g, '$1"***"')
    .replace(/("env"\s*:\s*\{)([^{}]*)\}/g, (_m, head: string, body: string) => `${head}${body.replace(/(:\s*)"(?:[^"\\]|\\.)*"/g, '$1"***"')}}`);
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
