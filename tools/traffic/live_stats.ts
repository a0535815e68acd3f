/**
 * @module Running counts of a traffic run for the live progress line and the summary:
 * sent, ok, shed (429/503 answers: the server refused work, with Retry-After), errors
 * (anything else, including network failures), latency quantiles and tokens/s of the
 * last `windowS` seconds (the line) and of the whole run (the summary).
 */
import { quantile } from "../bench/stats.ts";
import type { OpenLoopAnswer } from "../bench/load_generator.ts";

/** Statuses counted as shed: the server refused work it could not take now. */
export const SHED_STATUSES: readonly number[] = [429, 503];

/** What the progress line shows. */
export interface StatsSnapshot {
  elapsedS: number;
  sent: number;
  ok: number;
  shed: number;
  errors: number;
  /** Latency quantiles (ms) of ok answers in the window; NaN when none. */
  p50: number;
  p99: number;
  /** Ok rows per second in the window. */
  tokensPerS: number;
}

/** Accumulates answers; `now` is injectable for tests (ms, monotonic). */
export class LiveStats {
  sent = 0;
  ok = 0;
  shed = 0;
  errors = 0;
  okRows = 0;
  readonly statuses = new Map<string, number>();
  readonly byType = new Map<string, number>();
  readonly latencies: number[] = [];
  readonly #window: { at: number; latencyMs: number; rows: number }[] = [];
  readonly #now: () => number;
  readonly #windowMs: number;
  readonly #startedAt: number;

  constructor(options: { now?: () => number; windowS?: number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#windowMs = (options.windowS ?? 10) * 1000;
    this.#startedAt = this.#now();
  }

  /** A request was sent. */
  sentOne(): void {
    this.sent++;
  }

  /** An answer (or a network failure) arrived. */
  record(answer: OpenLoopAnswer): void {
    const status = String(answer.status);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    this.byType.set(answer.requestType, (this.byType.get(answer.requestType) ?? 0) + 1);
    if (answer.status === 200) {
      this.ok++;
      this.okRows += answer.rows;
      this.latencies.push(answer.latencyMs);
      this.#window.push({ at: this.#now(), latencyMs: answer.latencyMs, rows: answer.rows });
    } else if (typeof answer.status === "number" && SHED_STATUSES.includes(answer.status)) {
      this.shed++;
    } else {
      this.errors++;
    }
  }

  /** Seconds since the stats started. */
  elapsedS(): number {
    return (this.#now() - this.#startedAt) / 1000;
  }

  /** Counts so far and the window's latency and throughput. */
  snapshot(): StatsSnapshot {
    const now = this.#now();
    while (this.#window.length > 0 && this.#window[0]!.at < now - this.#windowMs) {
      this.#window.shift();
    }
    const latencies = this.#window.map((entry) => entry.latencyMs);
    const spanS = Math.max(Math.min(this.#windowMs, now - this.#startedAt) / 1000, 1e-3);
    return {
      elapsedS: (now - this.#startedAt) / 1000,
      sent: this.sent,
      ok: this.ok,
      shed: this.shed,
      errors: this.errors,
      p50: quantile(latencies, 0.5),
      p99: quantile(latencies, 0.99),
      tokensPerS: this.#window.reduce((sum, entry) => sum + entry.rows, 0) / spanS,
    };
  }
}

/** The one-line progress display, e.g. `[ 12/60 s skewed] sent 241 ok 239 …`. */
export function progressLine(snapshot: StatsSnapshot, durationS: number, label: string): string {
  const ms = (value: number) => Number.isNaN(value) ? "–" : `${value.toFixed(1)} ms`;
  const width = String(Math.round(durationS)).length;
  return `[${String(Math.min(Math.floor(snapshot.elapsedS), durationS)).padStart(width)}/${
    Math.round(durationS)
  } s ${label}] sent ${snapshot.sent}  ok ${snapshot.ok}  shed ${snapshot.shed}  err ${snapshot.errors}` +
    `  p50 ${ms(snapshot.p50)}  p99 ${ms(snapshot.p99)}  ${
      Math.round(snapshot.tokensPerS)
    } tokens/s`;
}
