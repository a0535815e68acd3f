/**
 * @module A {@linkcode Logger} that keeps lines in memory, for tests and silent runs.
 */
import type { LogFields, Logger, LogLevel } from "../logger.ts";

/** One recorded log line. */
export interface LogRecord {
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

/** Records every line in `records`; writes nothing. */
export class MemoryLogger implements Logger {
  readonly records: LogRecord[] = [];

  debug(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: "debug", msg, fields });
  }
  info(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: "info", msg, fields });
  }
  warn(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: "warn", msg, fields });
  }
  error(msg: string, fields: LogFields = {}): void {
    this.records.push({ level: "error", msg, fields });
  }

  /** Records with this message. */
  find(msg: string): LogRecord[] {
    return this.records.filter((record) => record.msg === msg);
  }
}
