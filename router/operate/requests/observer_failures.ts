/**
 * @module Failures of request observers (request log, metrics, request window, traffic
 * recorder) and of describing a finished request: an observer that throws must not
 * affect the answer, but its loss must not be silent either. Each failure is counted by
 * kind (`switchyard_router_observer_errors_total`); the first of each kind is logged
 * with its error and stack, later ones only counted, so a broken observer called on
 * every request cannot flood the log.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { InferenceObserver } from "../../serve/observe/inference_event.ts";

/** Counts and logs observer failures by kind; see the module doc. */
export class ObserverFailures {
  readonly #logger: Logger;
  readonly #counts = new Map<string, number>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Counts a failure of `kind`; the first one of each kind is logged. */
  record(kind: string, error: unknown): void {
    const count = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, count);
    if (count > 1) return;
    this.#logger.error("request observer failed (logged once per kind, counted always)", {
      kind,
      error: error instanceof Error ? error.message : String(error),
      ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
    });
  }

  /** Lists `kind` (at 0 until it fails), so the metric shows it before any failure. */
  declare(kind: string): void {
    if (!this.#counts.has(kind)) this.#counts.set(kind, 0);
  }

  /** `observer` with its failures recorded under `kind` (listed at 0 from now on). */
  guard(kind: string, observer: InferenceObserver): InferenceObserver {
    this.declare(kind);
    return (event) => {
      try {
        observer(event);
      } catch (error) {
        this.record(kind, error);
      }
    };
  }

  /** Failures so far by kind (every guarded kind listed, also at 0). */
  counts(): Map<string, number> {
    return new Map(this.#counts);
  }
}
