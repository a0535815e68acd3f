/**
 * @module The log pipeline of one process (router or backend): one
 * {@linkcode createJsonLogger} whose `write` hook fans every line out to
 *   (a) stdout, as before;
 *   (b) a rotating local file `<log.dir>/<service>[-<instance>].log` when `log.dir` is
 *       non-empty — the embedded log store `GET /api/logs` queries without Loki;
 *   (c) Grafana Loki when `loki.url` is set, with labels `service`, `level` and, for
 *       backends, `backend`.
 * Redaction stays in `createJsonLogger`, so every sink gets the same redacted line. Every
 * line carries `ts`, `level`, `msg`, `service` and, on backends, `backend`. A sink that
 * fails never reaches the caller: files and Loki only queue, and count what they drop.
 */
import { join } from "node:path";
import type { Config } from "../config.ts";
import { createJsonLogger, type LogFields, type Logger, writeStdout } from "../logger.ts";
import { lokiEntryFromLine } from "./loki_push.ts";
import { LokiShipper } from "./loki_shipper.ts";
import { RotatingFile } from "./rotating_file.ts";

/** Which process logs. */
export interface ServiceLoggerOptions {
  service: "router" | "backend";
  /** Backend id (required for backends: it names the file and the `backend` field/label). */
  instance?: string;
  /** Stdout sink; default: stdout (tests pass their own). */
  stdout?: (line: string) => void;
  /** Loki push `fetch`; default the global one (tests inject). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** Counters of the pipeline, for the `switchyard_log_lines_dropped_total` metric. */
export interface LogPipelineStats {
  /** Lines Loki accepted. */
  shipped: number;
  /** Lines lost by the file or Loki sink (buffer overflow, write or push refused). */
  dropped: number;
  /** Lines waiting for the file or for Loki. */
  buffered: number;
  /** Failed Loki push attempts. */
  failedPushes: number;
}

/** A process's logger with its sinks. */
export interface ServiceLogger {
  logger: Logger;
  stats(): LogPipelineStats;
  /** Flushes the file, makes a last push to Loki, closes both (idempotent). */
  close(): Promise<void>;
}

/** The log file of a service: `<dir>/<service>[-<instance>].log` (instance made file-safe). */
export function serviceLogPath(dir: string, service: string, instance?: string): string {
  const suffix = instance === undefined ? "" : `-${instance.replace(/[^A-Za-z0-9._-]/g, "_")}`;
  return join(dir, `${service}${suffix}.log`);
}

/** One note on stderr per failure streak of a sink (it cannot log through itself). */
function stderrNote(service: string): (message: string) => void {
  const encoder = new TextEncoder();
  return (message) => {
    try {
      const line = JSON.stringify({
        ts: new Date().toISOString(),
        level: "warn",
        msg: message,
        service,
        event: "log_sink_error",
      });
      Deno.stderr.writeSync(encoder.encode(`${line}\n`));
    } catch { /* nowhere left to report */ }
  };
}

/** Creates the logger of a router or backend process from `log.*` and `loki.*`. */
export function createServiceLogger(
  config: Pick<Config, "log" | "loki">,
  options: ServiceLoggerOptions,
): ServiceLogger {
  const { service, instance } = options;
  const base: LogFields = { service };
  const labels: Record<string, string> = { service };
  if (instance !== undefined) {
    const key = service === "backend" ? "backend" : "instance";
    base[key] = instance;
    labels[key] = instance;
  }
  const onError = stderrNote(service);
  const file = config.log.dir === "" ? undefined : new RotatingFile({
    path: serviceLogPath(config.log.dir, service, instance),
    maxBytes: config.log.max_file_bytes,
    maxFiles: config.log.max_files,
    onError,
  });
  const loki = config.loki.url === undefined ? undefined : new LokiShipper({
    url: config.loki.url,
    ...(config.loki.tenant !== undefined ? { tenant: config.loki.tenant } : {}),
    batchIntervalMs: config.loki.batch_interval,
    maxBufferLines: config.loki.max_buffer_lines,
    timeoutMs: config.loki.timeout,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    onError,
  });
  const stdout = options.stdout ?? writeStdout;
  const logger = createJsonLogger({
    level: config.log.level,
    base,
    write: (line) => {
      try {
        stdout(line);
      } catch { /* a closed stdout must not fail the caller */ }
      file?.write(line);
      loki?.push(lokiEntryFromLine(line, labels, Date.now()));
    },
  });
  let closing: Promise<void> | undefined;
  return {
    logger,
    stats() {
      const shipped = loki?.stats();
      return {
        shipped: shipped?.shipped ?? 0,
        dropped: (shipped?.dropped ?? 0) + (file?.dropped ?? 0),
        buffered: (shipped?.buffered ?? 0) + (file?.queued ?? 0),
        failedPushes: shipped?.failedPushes ?? 0,
      };
    },
    close: () => closing ??= Promise.all([file?.close(), loki?.close()]).then(() => {}),
  };
}
