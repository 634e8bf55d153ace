// `openvaala config check --json [--cwd DIR]` output -> problems for the Problems panel.
// Accepts the JSON report ({ok, errors|problems|diagnostics: [{path|file, line, column?, message,
// severity?}]}) and, as a fallback, the text form `path:line[:col]: message`. No `vscode` import.

export interface ConfigProblem {
  file: string;
  /** 1-based; 0 when unknown */
  line: number;
  /** 1-based; 0 when unknown */
  column: number;
  message: string;
  severity: "error" | "warning" | "info";
}

function sev(v: unknown): ConfigProblem["severity"] {
  const s = String(v ?? "error").toLowerCase();
  if (s.startsWith("warn")) return "warning";
  if (s === "info" || s === "information" || s === "note" || s === "hint") return "info";
  return "error";
}

function fromEntry(e: unknown, fallbackSeverity: ConfigProblem["severity"]): ConfigProblem | undefined {
  if (typeof e === "string") return parseTextLine(e) ?? { file: "", line: 0, column: 0, message: e, severity: fallbackSeverity };
  if (!e || typeof e !== "object") return undefined;
  const o = e as Record<string, unknown>;
  const message = String(o.message ?? o.msg ?? o.text ?? "");
  if (!message) return undefined;
  return {
    file: String(o.path ?? o.file ?? o.source ?? ""),
    line: Number(o.line ?? 0) || 0,
    column: Number(o.column ?? o.col ?? 0) || 0,
    message,
    severity: o.severity !== undefined ? sev(o.severity) : fallbackSeverity,
  };
}

const TEXT_RE = /^(.+?):(\d+)(?::(\d+))?: (?:(error|warning|info): )?(.*)$/;

export function parseTextLine(line: string): ConfigProblem | undefined {
  const m = TEXT_RE.exec(line.trim());
  if (!m) return undefined;
  return { file: m[1]!, line: Number(m[2]), column: m[3] ? Number(m[3]) : 0, message: m[5]!, severity: m[4] ? sev(m[4]) : "error" };
}

export interface ConfigCheckResult {
  problems: ConfigProblem[];
  /** the parsed JSON report, if the output was JSON */
  report?: Record<string, unknown> | undefined;
}

export function parseConfigCheck(stdout: string, stderr = ""): ConfigCheckResult {
  const trimmed = stdout.trim();
  if (trimmed.startsWith("{")) {
    try {
      const report = JSON.parse(trimmed) as Record<string, unknown>;
      const problems: ConfigProblem[] = [];
      for (const [key, severity] of [["errors", "error"], ["problems", "error"], ["diagnostics", "error"], ["warnings", "warning"]] as const) {
        const list = report[key];
        if (Array.isArray(list)) for (const e of list) {
          const p = fromEntry(e, severity);
          if (p) problems.push(p);
        }
      }
      return { problems, report };
    } catch {
      /* fall through to text */
    }
  }
  const problems: ConfigProblem[] = [];
  for (const l of (stdout + "\n" + stderr).split(/\r?\n/)) {
    const p = parseTextLine(l);
    if (p) problems.push(p);
  }
  return { problems };
}

/** fs/read_text_file semantics: `line` is 1-based, `limit` is a line count. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if ((line === undefined || line === null) && (limit === undefined || limit === null)) return text;
  const lines = text.split("\n");
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit !== undefined && limit !== null ? start + Math.max(0, limit) : lines.length;
  return lines.slice(start, end).join("\n");
}
