/**
 * @module Admission at the router: a bounded number of inference requests in flight
 * per router and per backend (`router.admission`). Beyond a bound the request is shed
 * at once — 429 with Retry-After while backends are alive but full, 503 with
 * Retry-After only when no backend can take work — so the router's memory and latency
 * stay bounded at any offered load. Sheds are counted by reason (metrics) and logged,
 * one line per reason per 10 s with the count since the last line.
 */
import { ApiError } from "../../../shared/errors.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { LogThrottle } from "./log_throttle.ts";

/** Why a request was shed. */
export type ShedReason = "router_full" | "backends_full" | "no_backend" | "readers_full";

/** Every shed reason (metric label values). */
export const SHED_REASONS: readonly ShedReason[] = [
  "router_full",
  "backends_full",
  "no_backend",
  "readers_full",
];

/** Settings of {@linkcode Admission} (`router.admission`). */
export interface AdmissionSettings {
  maxInFlight: number;
  maxPerBackend: number;
}

/** Seconds a shed client is asked to wait. */
export const SHED_RETRY_AFTER_S = 1;

/** Router-wide in-flight count, the per-backend bound, and shed accounting. */
export class Admission {
  readonly settings: AdmissionSettings;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #throttle = new LogThrottle(10_000);
  readonly #sheds = new Map<ShedReason, number>();
  #inFlight = 0;
  #entered = 0;
  #shedAfterEntry = 0;

  constructor(settings: AdmissionSettings, deps: { clock: Clock; logger: Logger }) {
    this.settings = settings;
    this.#clock = deps.clock;
    this.#logger = deps.logger;
  }

  /** Requests admitted and not yet finished. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Throws the 429 when `maxInFlight` requests are in flight (a check, nothing taken). */
  checkRoom(): void {
    if (this.#inFlight >= this.settings.maxInFlight) {
      throw this.shed(
        "router_full",
        `Cannot accept request: ${this.#inFlight} requests in flight (router.admission.max_in_flight); retry later`,
      );
    }
  }

  /**
   * Admits one request; returns its release (call once when done). Throws the 429 when
   * `maxInFlight` requests are in flight already.
   */
  enter(): () => void {
    this.checkRoom();
    this.#inFlight++;
    this.#entered++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
    };
  }

  /** Whether a backend with `inFlight` forwarded requests can take one more. */
  hasRoom(inFlight: number): boolean {
    return inFlight < this.settings.maxPerBackend;
  }

  /**
   * Counts a request shed because every backend serving `model` is full; its 429.
   * `afterEntry`: the request had entered (false for the check before its body is read).
   */
  backendsFull(model: string, afterEntry = true): ApiError {
    if (afterEntry) this.#shedAfterEntry++;
    return this.shed(
      "backends_full",
      `Cannot run inference: every backend serving model "${model}" has ${this.settings.maxPerBackend} requests in flight (router.admission.max_in_flight_per_backend); retry later`,
    );
  }

  /** Counts a request shed because every body-reading slot is taken by a young read; its 429. */
  readersFull(maxReaders: number): ApiError {
    return this.shed(
      "readers_full",
      `Cannot read request body: ${maxReaders} request bodies are being read (router.admission.max_body_readers); retry later`,
    );
  }

  /** Counts and (throttled) logs a shed request; returns the error to answer with. */
  shed(reason: ShedReason, message: string): ApiError {
    if (reason === "no_backend") this.#shedAfterEntry++;
    this.#sheds.set(reason, (this.#sheds.get(reason) ?? 0) + 1);
    const count = this.#throttle.event(reason, this.#clock.now());
    if (count !== undefined) {
      this.#logger.warn("requests shed", {
        event: "shed",
        reason,
        count,
        in_flight: this.#inFlight,
        message,
      });
    }
    const code = reason === "no_backend" ? "no_healthy_backend" : "too_many_requests";
    return new ApiError(code, message, { retryAfterS: SHED_RETRY_AFTER_S });
  }

  /** Requests that passed the router-wide bound so far (some may be shed after). */
  get entered(): number {
    return this.#entered;
  }

  /** Requests that entered and were not shed after (forwarded to a backend) so far. */
  get admitted(): number {
    return this.#entered - this.#shedAfterEntry;
  }

  /** Shed requests so far by reason. */
  sheds(): ReadonlyMap<ShedReason, number> {
    return this.#sheds;
  }
}
