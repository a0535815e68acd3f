/**
 * @module Outlier detection: which backends are in rotation, decided from consecutive
 * outcomes of active probes and of real traffic (pure; no clock, no I/O).
 *
 * Rules, per backend:
 * - a backend joins rotation on its first passing probe; after an ejection it needs
 *   `readmitAfter` consecutive passing probes;
 * - failures (probe timeouts, connection failures, traffic timeouts, 5xx answers) count
 *   up; `ejectAfter` in a row eject it; any success resets the count;
 * - a backend that answers "not ready" leaves rotation at once (it said so; no guess);
 * - a timeout while the router's own event loop was late by `lagAllowanceMs` or more is
 *   excused: the router was busy, so it says nothing about the backend;
 * - panic: when fewer than `panicThreshold` of the members are in rotation, callers
 *   route to every member rather than to the few (or none) left.
 */

/** Why an outcome counts against a backend; also the reason label of ejections. */
export type FailureKind =
  | "probe_timeout"
  | "probe_failed"
  | "not_ready"
  | "connection"
  | "timeout"
  | "server_error";

/** Every failure kind, in a fixed order (metrics label values). */
export const FAILURE_KINDS: readonly FailureKind[] = [
  "probe_timeout",
  "probe_failed",
  "not_ready",
  "connection",
  "timeout",
  "server_error",
];

/** Settings of {@linkcode OutlierDetector} (`router.outlier`). */
export interface OutlierSettings {
  ejectAfter: number;
  readmitAfter: number;
  panicThreshold: number;
  lagAllowanceMs: number;
}

/** What one outcome changed. */
export type Verdict =
  /** Joined rotation (first time or re-admitted). */
  | "admitted"
  /** Left rotation: ejected (or, never admitted, still out). */
  | "ejected"
  /** Not yet in rotation; counted towards admission or kept out. */
  | "out"
  /** In rotation, unchanged (a failure below the threshold, or a success). */
  | "in"
  /** A timeout excused by the router's own lag: nothing counted. */
  | "excused";

interface Entry {
  inRotation: boolean;
  everAdmitted: boolean;
  failures: number;
  successes: number;
  lastFailure: FailureKind | undefined;
}

/** Read-only state of one backend. */
export interface OutlierState {
  inRotation: boolean;
  failures: number;
  successes: number;
  lastFailure: FailureKind | undefined;
}

/** The outlier detector; see the module doc. */
export class OutlierDetector {
  readonly settings: OutlierSettings;
  readonly #entries = new Map<string, Entry>();
  readonly #ejections = new Map<FailureKind, number>();
  #excused = 0;

  constructor(settings: OutlierSettings) {
    this.settings = settings;
  }

  #entry(id: string): Entry {
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      entry = {
        inRotation: false,
        everAdmitted: false,
        failures: 0,
        successes: 0,
        lastFailure: undefined,
      };
      this.#entries.set(id, entry);
    }
    return entry;
  }

  /** Forgets a backend (it left the pool). */
  remove(id: string): void {
    this.#entries.delete(id);
  }

  /** Whether `id` is in rotation. */
  inRotation(id: string): boolean {
    return this.#entries.get(id)?.inRotation ?? false;
  }

  /** A snapshot of `id`'s counters. */
  state(id: string): OutlierState {
    const { inRotation, failures, successes, lastFailure } = this.#entry(id);
    return { inRotation, failures, successes, lastFailure };
  }

  /** A passing probe. */
  probePassed(id: string): Verdict {
    const entry = this.#entry(id);
    entry.failures = 0;
    if (entry.inRotation) return "in";
    entry.successes++;
    const needed = entry.everAdmitted ? this.settings.readmitAfter : 1;
    if (entry.successes < needed) return "out";
    entry.inRotation = true;
    entry.everAdmitted = true;
    entry.successes = 0;
    return "admitted";
  }

  /** A successful answer from real traffic (resets the failure count; never admits). */
  trafficPassed(id: string): Verdict {
    const entry = this.#entry(id);
    entry.failures = 0;
    return entry.inRotation ? "in" : "out";
  }

  /**
   * A failed probe or request. `lagMs`: how late the router's event loop was while it
   * waited (timeouts only are excused by it).
   */
  failed(id: string, kind: FailureKind, lagMs = 0): Verdict {
    const entry = this.#entry(id);
    const timeout = kind === "probe_timeout" || kind === "timeout";
    if (timeout && lagMs >= this.settings.lagAllowanceMs) {
      this.#excused++;
      return "excused";
    }
    entry.successes = 0;
    entry.failures++;
    entry.lastFailure = kind;
    if (!entry.inRotation) return "out";
    if (kind !== "not_ready" && entry.failures < this.settings.ejectAfter) return "in";
    entry.inRotation = false;
    this.#ejections.set(kind, (this.#ejections.get(kind) ?? 0) + 1);
    return "ejected";
  }

  /** Whether fewer than the panic threshold of `members` are in rotation. */
  panic(members: readonly string[]): boolean {
    if (members.length === 0) return false;
    const up = members.filter((id) => this.inRotation(id)).length;
    return up / members.length < this.settings.panicThreshold;
  }

  /** Ejections so far by reason. */
  ejections(): ReadonlyMap<FailureKind, number> {
    return this.#ejections;
  }

  /** Timeouts excused by the router's own lag so far. */
  get excused(): number {
    return this.#excused;
  }
}
