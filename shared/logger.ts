/**
 * @module Structured logging: a tiny {@linkcode Logger} interface and a JSON-lines
 * implementation (one object per line on stdout, ready for Loki or `jq`).
 *
 * Fields whose name looks secret (token, authorization, password, secret, cookie) are
 * written as `"[redacted]"`, as a second line of defence: callers never pass secrets.
 */

/** Extra structured fields of a log line. */
export type LogFields = Record<string, unknown>;

/** Severity, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** A structured logger. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /**
   * Whether a line at `level` would be written; absent: assume it would. Callers on a hot
   * path ask before building fields that would be dropped.
   */
  enabled?(level: LogLevel): boolean;
}

const LEVEL_RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const SECRET_KEY = /token|authorization|password|secret|cookie/i;
const encoder = new TextEncoder();

/** Writes `line` to stdout synchronously, whole (the default sink). */
export function writeStdout(line: string): void {
  const bytes = encoder.encode(line);
  let written = 0;
  while (written < bytes.byteLength) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function fieldValue(key: string, value: unknown): unknown {
  if (SECRET_KEY.test(key)) return "[redacted]";
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** Options of {@linkcode createJsonLogger}. */
export interface JsonLoggerOptions {
  /** Lowest level written; default `"info"`. */
  level?: LogLevel;
  /** Static fields added to every line, e.g. `{ service: "router" }`. */
  base?: LogFields;
  /** Line sink (the line ends with `\n`); default: stdout. */
  write?: (line: string) => void;
  /** Time source; default `Date.now`. */
  now?: () => number;
}

/** Creates a logger writing one JSON object per line: `{ts, level, msg, ...fields}`. */
export function createJsonLogger(options: JsonLoggerOptions = {}): Logger {
  const minRank = LEVEL_RANK[options.level ?? "info"];
  const write = options.write ?? writeStdout;
  const now = options.now ?? Date.now;
  const base = options.base ?? {};
  const log = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
    if (LEVEL_RANK[level] < minRank) return;
    const record: LogFields = { ts: new Date(now()).toISOString(), level, msg };
    for (const [key, value] of Object.entries({ ...base, ...fields })) {
      if (key in record) continue;
      record[key] = fieldValue(key, value);
    }
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({ ts: record["ts"], level, msg, note: "fields not serialisable" });
    }
    write(line + "\n");
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (level) => LEVEL_RANK[level] >= minRank,
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
