/**
 * @module Retrying Deno KV calls that fail because another process holds the store:
 * several routers on one SQLite KV file get `database is locked` (and, rarely, `busy`)
 * under write load. Such calls are retried with jittered exponential backoff; any other
 * error is thrown at once.
 */

/** Options of {@linkcode withKvRetry}. */
export interface KvRetryOptions {
  /** Attempts in all; default 6. */
  attempts?: number;
  /** First backoff (ms), doubled per attempt, ±50 % jitter; default 20. */
  baseDelayMs?: number;
  /** Waits between attempts; default a real timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1); default `Math.random`. */
  random?: () => number;
}

/** Whether `error` says the KV store was busy (worth retrying). */
export function isKvBusy(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /database is locked|database is busy|SQLITE_BUSY/i.test(message);
}

/** Runs `call`, retrying it while the store is busy; throws the last error. */
export async function withKvRetry<T>(
  call: () => Promise<T>,
  options: KvRetryOptions = {},
): Promise<T> {
  const attempts = options.attempts ?? 6;
  const base = options.baseDelayMs ?? 20;
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  for (let attempt = 1;; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isKvBusy(error) || attempt >= attempts) throw error;
      await sleep(base * 2 ** (attempt - 1) * (0.5 + random()));
    }
  }
}
