/**
 * @module A size-rotated, append-only log file written asynchronously: the embedded log
 * store when no Loki is configured (`log.dir`).
 *
 * Design: `write()` only queues the line (synchronous, never throws) and schedules one
 * flush; the flush appends everything queued in one write per file segment. Before a
 * line would push the file past `maxBytes`, the file is rotated: `<path>.<n-1>` →
 * `<path>.<n>` … `<path>` → `<path>.1`, keeping `maxFiles` rotated files (the oldest is
 * overwritten). A single line larger than `maxBytes` gets a file of its own. The queue is
 * bounded (`maxQueuedLines`, oldest dropped); lines that cannot be written (disk full,
 * directory gone) are dropped and counted, the error is reported once per failure streak
 * through `onError`, and the next flush reopens the file.
 */
import { dirname } from "node:path";
import { concatBytes } from "../concat_bytes.ts";

/** Options of {@linkcode RotatingFile}. */
export interface RotatingFileOptions {
  /** The live file, e.g. `data/logs/router.log`. */
  path: string;
  /** Rotate before the file would exceed this many bytes. */
  maxBytes: number;
  /** Rotated files kept (`.1` … `.maxFiles`). */
  maxFiles: number;
  /** Lines held while a flush is slow; beyond it the oldest are dropped (counted). Default 10 000. */
  maxQueuedLines?: number;
  /** Told about write failures (once per streak); default: ignored. */
  onError?: (message: string) => void;
}

const encoder = new TextEncoder();

/** Paths of a rotating log file, newest first: `path`, `path.1`, … `path.maxFiles`. */
export function rotatedPaths(path: string, maxFiles: number): string[] {
  return [path, ...Array.from({ length: maxFiles }, (_, i) => `${path}.${i + 1}`)];
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** An append-only JSON-lines file rotated by size. */
export class RotatingFile {
  readonly #options: RotatingFileOptions;
  readonly #maxQueued: number;
  #queue: string[] = [];
  #file: Deno.FsFile | undefined;
  #size = 0;
  #flushing: Promise<void> | undefined;
  #scheduled: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #failing = false;
  #dropped = 0;
  #written = 0;

  constructor(options: RotatingFileOptions) {
    if (!(options.maxBytes > 0)) {
      throw new RangeError("Cannot write log file: maxBytes must be > 0");
    }
    if (!(options.maxFiles >= 1)) {
      throw new RangeError("Cannot write log file: maxFiles must be >= 1");
    }
    this.#options = options;
    this.#maxQueued = options.maxQueuedLines ?? 10_000;
  }

  /** Lines dropped (queue full, write failed, written after close). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Lines written to disk. */
  get written(): number {
    return this.#written;
  }

  /** Lines queued and not yet written. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Queues one line (ending in `\n`); never throws, never waits. */
  write(line: string): void {
    if (this.#closed) {
      this.#dropped++;
      return;
    }
    if (this.#queue.length >= this.#maxQueued) {
      this.#queue.shift();
      this.#dropped++;
    }
    this.#queue.push(line);
    if (this.#scheduled === undefined && this.#flushing === undefined) {
      this.#scheduled = setTimeout(() => {
        this.#scheduled = undefined;
        void this.flush();
      }, 0);
    }
  }

  /** Writes everything queued so far; resolves when it is on disk (or dropped). */
  flush(): Promise<void> {
    if (this.#scheduled !== undefined) {
      clearTimeout(this.#scheduled);
      this.#scheduled = undefined;
    }
    this.#flushing ??= this.#drain().finally(() => this.#flushing = undefined);
    return this.#flushing;
  }

  /** Flushes and closes the file; later writes are dropped. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
    this.#file?.close();
    this.#file = undefined;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const lines = this.#queue;
      this.#queue = [];
      try {
        await this.#append(lines);
        this.#failing = false;
      } catch (error) {
        this.#dropped += lines.length;
        this.#file?.close();
        this.#file = undefined;
        if (!this.#failing) {
          this.#failing = true;
          this.#options.onError?.(
            `Cannot write log file "${this.#options.path}": ${(error as Error).message}`,
          );
        }
      }
    }
  }

  /** Appends `lines`, rotating between them whenever the next one would overflow. */
  async #append(lines: string[]): Promise<void> {
    const { maxBytes } = this.#options;
    let chunk: Uint8Array[] = [];
    let chunkBytes = 0;
    let done = 0;
    const file = await this.#open();
    let target = file;
    const writeChunk = async () => {
      if (chunkBytes === 0) return;
      await writeAll(target, chunk.length === 1 ? chunk[0]! : concatBytes(chunk, chunkBytes));
      this.#size += chunkBytes;
      this.#written += done;
      chunk = [];
      chunkBytes = 0;
      done = 0;
    };
    for (const line of lines) {
      const bytes = encoder.encode(line);
      if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes.byteLength > maxBytes) {
        await writeChunk();
        target = await this.#rotate();
      }
      chunk.push(bytes);
      chunkBytes += bytes.byteLength;
      done++;
    }
    await writeChunk();
  }

  async #open(): Promise<Deno.FsFile> {
    if (this.#file !== undefined) return this.#file;
    const { path } = this.#options;
    await Deno.mkdir(dirname(path), { recursive: true });
    const file = await Deno.open(path, { append: true, create: true });
    this.#size = (await file.stat()).size;
    this.#file = file;
    return file;
  }

  async #rotate(): Promise<Deno.FsFile> {
    this.#file?.close();
    this.#file = undefined;
    const paths = rotatedPaths(this.#options.path, this.#options.maxFiles);
    for (let i = paths.length - 1; i > 0; i--) {
      if (await exists(paths[i - 1]!)) await Deno.rename(paths[i - 1]!, paths[i]!);
    }
    return await this.#open();
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.byteLength) written += await file.write(bytes.subarray(written));
}
