/**
 * @module The router's view of its backends: health, models served, in-flight work.
 *
 * Design: every `healthIntervalMs` one round probes each backend's `/v2/health/ready`
 * (rounds never overlap; the next is scheduled when one ends). Whether a backend is in
 * rotation is the {@linkcode OutlierDetector}'s call, from consecutive outcomes of these
 * probes and of real traffic (the forwarder reports through `reportSuccess()` and
 * `reportFailure()`): it tells slow from dead, excuses timeouts the router's own
 * event-loop lag explains, and re-admits an ejected backend after consecutive passing
 * probes (spaced `recheckMs` apart, so a restarted backend is back within a second or
 * two). While a backend is ejected, the requests in flight to it are aborted through
 * `ejectionSignal()` (the forwarder retries them elsewhere). Under panic (few backends
 * in rotation), `candidates()` also returns backends ejected for slowness.
 *
 * Known model names come from the options, from `models` in ready details, and from
 * `discoverModel()`, which asks healthy backends about a name a client requested
 * (misses are remembered for one interval, bounded, so probing random names cannot
 * amplify into backend traffic). A backend joining rotation has been asked about every
 * known name, so `candidates(model)` is complete.
 */
import type { Config } from "../../../shared/config.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import {
  type BackendClientOptions,
  checkReady,
  fetchModelMetadata,
  type MetadataResult,
} from "./backend_client.ts";
import { type BackendState, newBackendState, snapshot } from "./_backend_state.ts";
import { ExpiringSet } from "./_expiring_set.ts";
import type { BackendRole, BackendView } from "./backend_view.ts";
import { announcedModels, type CatalogEntry, MODEL_NAME } from "./model_catalog.ts";
import { PeriodicRounds } from "../../runtime/periodic_rounds.ts";
import {
  type FailureKind,
  OutlierDetector,
  type OutlierSettings,
  type Verdict,
} from "../health/outlier_detector.ts";

/** Failures that say "slow or sick", not "dead": panic routing still tries these. */
const SLOW = new Set<FailureKind | undefined>(["probe_timeout", "timeout", "server_error"]);

/** Outlier settings when none are given: `router.outlier`'s defaults. */
export const DEFAULT_OUTLIER: OutlierSettings = {
  ejectAfter: 3,
  readmitAfter: 2,
  panicThreshold: 0.5,
  lagAllowanceMs: 200,
};

/** Options of {@linkcode BackendPool}. */
export interface BackendPoolOptions {
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Time between the end of one check round and the start of the next. */
  healthIntervalMs: number;
  /** Limit of each health or metadata call. */
  healthTimeoutMs: number;
  /** Bearer token backends require; never logged. */
  internalToken?: string | undefined;
  /** Model names to look up on every backend from the first check; default none. */
  models?: readonly string[];
  /** Ejection and re-admission rules; default {@linkcode DEFAULT_OUTLIER}. */
  outlier?: OutlierSettings;
  /** The router's event-loop lag since a time (ms); default none measured. */
  lagSince?: (since: number) => number;
  /** Pause between re-admission probes of an ejected backend; default ¼ interval, ≤ 250 ms. */
  recheckMs?: number;
}

/** Tracks configured backends; see the module doc for the health and catalog rules. */
export class BackendPool {
  readonly #options: BackendPoolOptions;
  readonly #backends: BackendState[] = [];
  readonly #knownModels = new Set<string>();
  readonly #misses = new ExpiringSet(1024);
  readonly #discoveries = new Map<string, Promise<CatalogEntry | undefined>>();
  readonly #rounds: PeriodicRounds;
  /** Ejection and re-admission decisions. */
  readonly outlier: OutlierDetector;
  /** Per backend: aborted when it is ejected (requests in flight to it stop waiting). */
  readonly #ejection = new Map<string, AbortController>();
  readonly #checking = new Map<string, Promise<void>>();
  readonly #rechecks = new Set<unknown>();
  #admitAs: ((url: string) => BackendRole) | undefined;

  constructor(urls: readonly string[], options: BackendPoolOptions) {
    this.#options = options;
    this.outlier = new OutlierDetector(options.outlier ?? DEFAULT_OUTLIER);
    this.#rounds = new PeriodicRounds(
      options.clock,
      options.healthIntervalMs,
      () => this.#checkAll(),
    );
    for (const name of options.models ?? []) this.#knownModels.add(name);
    for (const raw of urls) {
      const url = raw.replace(/\/+$/, "");
      const id = new URL(url).host;
      if (this.#backends.some((backend) => backend.id === id)) {
        options.logger.warn("duplicate backend ignored", { backend: id });
        continue;
      }
      this.#backends.push(newBackendState(id, url));
    }
  }

  /** A pool over `config.router.backends` with the configured intervals and token. */
  static fromConfig(
    config: Pick<Config, "auth" | "router">,
    deps: {
      fetch: FetchLike;
      clock: Clock;
      logger: Logger;
      lagSince?: ((since: number) => number) | undefined;
    },
  ): BackendPool {
    return new BackendPool(config.router.backends, {
      ...deps,
      healthIntervalMs: config.router.health_interval,
      healthTimeoutMs: config.router.health_timeout,
      internalToken: config.auth.internal_token,
      outlier: outlierSettings(config),
      ...(deps.lagSince ? { lagSince: deps.lagSince } : {}),
    });
  }

  /**
   * Adds a member (e.g. a backend a scaler started); it joins rotation once a check
   * passes — one runs now. Its role is `options.role`, else what the admission rule says
   * ({@linkcode BackendPool.admitAs}), else `active`. False when it is already a member.
   */
  add(raw: string, options: { role?: BackendRole } = {}): boolean {
    const url = raw.replace(/\/+$/, "");
    const id = new URL(url).host;
    if (this.#backends.some((backend) => backend.id === id)) return false;
    const role = options.role ?? this.#admitAs?.(url) ?? "active";
    this.#backends.push(newBackendState(id, url, role));
    this.#options.logger.info("backend added", {
      event: "backend_added",
      backend: id,
      url,
      role,
    });
    void this.checkNow();
    return true;
  }

  /**
   * The role of members added without one (discovery's additions): the pre-warm job makes
   * backends that join while it prepares a peak `standby`. Undefined: `active`.
   */
  admitAs(rule: ((url: string) => BackendRole) | undefined): void {
    this.#admitAs = rule;
  }

  /**
   * Sets a member's role: `standby` and `draining` members get no new requests, requests
   * in flight finish. False when it is not a member.
   */
  setRole(raw: string, role: BackendRole): boolean {
    const id = new URL(raw.replace(/\/+$/, "")).host;
    const backend = this.#backends.find((b) => b.id === id);
    if (backend === undefined) return false;
    if (backend.role !== role) {
      this.#options.logger.info("backend role changed", {
        event: "backend_role",
        backend: id,
        from: backend.role,
        to: role,
        in_flight: backend.inFlight,
      });
      backend.role = role;
    }
    return true;
  }

  /**
   * Removes a member (discovery no longer finds it). Requests already forwarded to it
   * finish (or fail and retry elsewhere); it gets no new ones. False when not a member.
   */
  remove(raw: string): boolean {
    const id = new URL(raw.replace(/\/+$/, "")).host;
    const index = this.#backends.findIndex((backend) => backend.id === id);
    if (index < 0) return false;
    const [backend] = this.#backends.splice(index, 1);
    this.outlier.remove(id);
    this.#ejection.get(id)?.abort();
    this.#ejection.delete(id);
    this.#options.logger.info("backend removed", {
      event: "backend_removed",
      backend: id,
      url: backend!.url,
      in_flight: backend!.inFlight,
    });
    return true;
  }

  /** Base URLs of every member, in order. */
  urls(): string[] {
    return this.#backends.map((backend) => backend.url);
  }

  /** Runs a first check round, then keeps checking every interval until `stop()`. */
  start(): Promise<void> {
    return this.#rounds.start();
  }

  /** Stops checking, aborts calls in progress and waits for the current round to end. */
  async stop(): Promise<void> {
    for (const timer of this.#rechecks) this.#options.clock.clearTimeout(timer);
    this.#rechecks.clear();
    await this.#rounds.stop();
    await Promise.all(this.#checking.values());
  }

  /** Checks every backend once (joins the round in progress, if any). */
  checkNow(): Promise<void> {
    return this.#rounds.runNow();
  }

  /** Snapshots of every backend, in config order. */
  views(): BackendView[] {
    return this.#backends.map(snapshot);
  }

  /** Number of healthy backends. */
  healthyCount(): number {
    return this.#backends.filter((backend) => backend.status === "up").length;
  }

  /** Whether few enough backends are in rotation to route to all (the panic threshold). */
  panic(): boolean {
    const inRotation = this.#backends.filter((backend) => backend.role === "active");
    return this.outlier.panic(inRotation.map((backend) => backend.id));
  }

  /**
   * Healthy backends serving `model` with the catalog's `d_model`, in config order. In
   * panic, also those ejected for looking slow or sick (timeouts, 5xx) — not those known
   * dead (refused connections) or that said they are not ready.
   */
  candidates(model: string): BackendView[] {
    const entry = this.model(model);
    if (entry === undefined) return [];
    const serving = this.#backends.filter((backend) =>
      backend.role === "active" && backend.models.get(model)?.dModel === entry.dModel
    );
    const up = serving.filter((backend) => backend.status === "up");
    if (!this.panic()) return up.map(snapshot);
    return serving
      .filter((backend) =>
        backend.status === "up" || SLOW.has(this.outlier.state(backend.id).lastFailure)
      )
      .map(snapshot);
  }

  /** The union catalog: every model some backend served, healthy backends first. */
  catalog(): Map<string, CatalogEntry> {
    const catalog = new Map<string, CatalogEntry>();
    const ordered = [...this.#backends].sort((a, b) =>
      Number(b.status === "up") - Number(a.status === "up")
    );
    for (const backend of ordered) {
      for (const [name, entry] of backend.models) if (!catalog.has(name)) catalog.set(name, entry);
    }
    return catalog;
  }

  /** Versions of `name` the backends serve (healthy first), from their metadata. */
  modelVersions(name: string): string[] {
    const versions = new Set<string>();
    const ordered = [...this.#backends].sort((a, b) =>
      Number(b.status === "up") - Number(a.status === "up")
    );
    for (const backend of ordered) {
      for (const version of backend.models.get(name)?.metadata.versions ?? []) {
        versions.add(version);
      }
    }
    return [...versions];
  }

  /** The catalog entry of one model, if any backend served it. */
  model(name: string): CatalogEntry | undefined {
    // What `catalog().get(name)` answers (healthy backends first, then config order),
    // without building the catalog: this runs several times per inference request.
    for (const backend of this.#backends) {
      if (backend.status === "up") {
        const entry = backend.models.get(name);
        if (entry !== undefined) return entry;
      }
    }
    for (const backend of this.#backends) {
      if (backend.status !== "up") {
        const entry = backend.models.get(name);
        if (entry !== undefined) return entry;
      }
    }
    return undefined;
  }

  /** Looks `name` up in the catalog, asking healthy backends when it is not there yet. */
  discoverModel(name: string): Promise<CatalogEntry | undefined> {
    const known = this.model(name);
    if (known !== undefined) return Promise.resolve(known);
    if (!MODEL_NAME.test(name)) return Promise.resolve(undefined);
    if (this.#misses.has(name, this.#options.clock.now())) return Promise.resolve(undefined);
    let pending = this.#discoveries.get(name);
    if (pending === undefined) {
      pending = this.#discover(name).finally(() => this.#discoveries.delete(name));
      this.#discoveries.set(name, pending);
    }
    return pending;
  }

  /** Counts one forwarded request against backend `id`; call the result once when done. */
  acquire(id: string): () => void {
    const backend = this.#find(id);
    backend.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      backend.inFlight--;
    };
  }

  /** A request to backend `id` was answered (below 500, or 503: it shed load). */
  reportSuccess(id: string): void {
    if (this.#backends.some((backend) => backend.id === id)) this.outlier.trafficPassed(id);
  }

  /**
   * A request to backend `id` failed (`lagMs`: the router's own lag while it waited);
   * enough in a row eject it. Returns the detector's verdict.
   */
  reportFailure(id: string, kind: FailureKind, reason: string, lagMs = 0): Verdict {
    // A backend removed by discovery while a request to it was failing: nothing to mark.
    const backend = this.#backends.find((candidate) => candidate.id === id);
    if (backend === undefined) return "out";
    return this.#apply(backend, this.outlier.failed(id, kind, lagMs), reason);
  }

  /** Aborted when backend `id` is ejected; requests to it pass it on. */
  ejectionSignal(id: string): AbortSignal {
    let controller = this.#ejection.get(id);
    if (controller === undefined || controller.signal.aborted) {
      controller = new AbortController();
      this.#ejection.set(id, controller);
    }
    return controller.signal;
  }

  /** The router's event-loop lag since `since`. */
  lagSince(since: number): number {
    return this.#options.lagSince?.(since) ?? 0;
  }

  #find(id: string): BackendState {
    const backend = this.#backends.find((candidate) => candidate.id === id);
    if (backend === undefined) throw new RangeError(`Cannot find backend: unknown id "${id}"`);
    return backend;
  }

  #client(): BackendClientOptions {
    return {
      fetch: this.#options.fetch,
      clock: this.#options.clock,
      timeoutMs: this.#options.healthTimeoutMs,
      internalToken: this.#options.internalToken,
      signal: this.#rounds.signal,
    };
  }

  async #checkAll(): Promise<void> {
    await Promise.all(this.#backends.map((backend) => this.#checkOnce(backend)));
  }

  /** One check of `backend`, unless one is running already (a round and a recheck). */
  #checkOnce(backend: BackendState): Promise<void> {
    let running = this.#checking.get(backend.id);
    if (running === undefined) {
      running = this.#check(backend).finally(() => this.#checking.delete(backend.id));
      this.#checking.set(backend.id, running);
    }
    return running;
  }

  async #check(backend: BackendState): Promise<void> {
    const clock = this.#options.clock;
    try {
      const signal = this.#rounds.signal;
      const started = clock.now();
      const result = await checkReady(backend.url, this.#client());
      if (signal.aborted) return;
      backend.checkedAt = clock.now();
      if (result.details !== undefined) backend.details = result.details;
      if (!result.ready) {
        const kind: FailureKind = result.failure === "timeout"
          ? "probe_timeout"
          : result.failure === "answered"
          ? "not_ready"
          : "probe_failed";
        // Late because the router was busy: the lag sampled meanwhile, or the timer's own.
        const lag = Math.max(
          this.lagSince(started),
          clock.now() - started - this.#options.healthTimeoutMs,
        );
        this.#apply(backend, this.outlier.failed(backend.id, kind, lag), result.reason);
        return;
      }
      for (const name of announcedModels(result.details)) this.#knownModels.add(name);
      if (backend.status !== "up") {
        backend.models.clear();
        backend.missing.clear();
      }
      const unasked = [...this.#knownModels].filter((name) =>
        !backend.models.has(name) && !backend.missing.has(name)
      );
      const outcomes = await Promise.all(unasked.map((name) => this.#lookUp(backend, name, true)));
      if (signal.aborted || outcomes.includes("unreachable")) return;
      const verdict = this.outlier.probePassed(backend.id);
      this.#apply(backend, verdict, "");
      if (verdict === "out") this.#recheckSoon(backend);
    } catch (error) {
      // A check must never take the pool down; treat surprises as a failed check.
      const reason = `check failed: ${(error as Error).message}`;
      this.#apply(backend, this.outlier.failed(backend.id, "probe_failed"), reason);
    }
  }

  /** An ejected backend passed a probe: probe it again soon (re-admission needs a run). */
  #recheckSoon(backend: BackendState): void {
    if (this.#rounds.signal.aborted) return;
    const { healthIntervalMs, recheckMs } = this.#options;
    const timer = this.#options.clock.setTimeout(() => {
      this.#rechecks.delete(timer);
      if (this.#backends.includes(backend)) void this.#checkOnce(backend);
    }, recheckMs ?? Math.min(250, healthIntervalMs / 4));
    this.#rechecks.add(timer);
  }

  /** Applies a detector verdict to the pool's record (status, logs, ejection signal). */
  #apply(backend: BackendState, verdict: Verdict, reason: string): Verdict {
    if (verdict === "admitted" || (verdict === "in" && reason === "")) {
      this.#setUp(backend);
    } else if (verdict === "ejected") {
      this.#setDown(backend, reason, true);
    } else if (verdict === "out") {
      if (reason === "") {
        const { successes } = this.outlier.state(backend.id);
        backend.lastError =
          `re-admission: ${successes} of ${this.outlier.settings.readmitAfter} passing checks`;
      } else this.#setDown(backend, reason, false);
    } else if (verdict === "in") {
      backend.lastError = reason;
    } else if (verdict === "excused") {
      this.#options.logger.debug("timeout excused by the router's own lag", {
        backend: backend.id,
        reason,
      });
    }
    return verdict;
  }

  async #lookUp(
    backend: BackendState,
    name: string,
    remember: boolean,
  ): Promise<MetadataResult["kind"]> {
    const result = await fetchModelMetadata(backend.url, name, this.#client());
    if (this.#rounds.signal.aborted) return "error";
    if (result.kind === "found") {
      backend.models.set(name, result.entry);
      backend.missing.delete(name);
    }
    if (result.kind === "missing" && remember) backend.missing.add(name);
    if (result.kind === "unreachable") {
      this.#apply(backend, this.outlier.failed(backend.id, "probe_failed"), result.reason);
    }
    if (result.kind === "error") {
      this.#options.logger.warn("model metadata unavailable", {
        backend: backend.id,
        model: name,
        reason: result.reason,
      });
    }
    return result.kind;
  }

  async #discover(name: string): Promise<CatalogEntry | undefined> {
    const healthy = this.#backends.filter((backend) => backend.status === "up");
    if (healthy.length === 0) return undefined;
    const outcomes = await Promise.all(
      healthy.map((backend) => this.#lookUp(backend, name, false)),
    );
    if (outcomes.includes("found")) {
      this.#knownModels.add(name);
      healthy.forEach((backend, i) => {
        if (outcomes[i] === "missing") backend.missing.add(name);
      });
      return this.model(name);
    }
    // Unreachable or failing backends say nothing about the name: do not remember a miss.
    if (!outcomes.includes("missing")) return undefined;
    this.#misses.add(name, this.#options.clock.now() + this.#options.healthIntervalMs);
    return undefined;
  }

  #setUp(backend: BackendState): void {
    backend.lastError = undefined;
    if (backend.status === "up") return;
    backend.status = "up";
    this.#options.logger.info("backend up", {
      event: "backend_up",
      backend: backend.id,
      url: backend.url,
      models: [...backend.models.keys()],
      execution_provider: backend.details?.["execution_provider"],
    });
  }

  #setDown(backend: BackendState, reason: string, ejected: boolean): void {
    backend.lastError = reason;
    if (ejected) this.#ejection.get(backend.id)?.abort(new EjectedError(backend.id, reason));
    if (backend.status === "down") return;
    backend.status = "down";
    this.#options.logger.warn("backend down", {
      event: "backend_down",
      backend: backend.id,
      url: backend.url,
      reason,
      ...(ejected ? { ejected: this.outlier.state(backend.id).lastFailure } : {}),
    });
  }
}

/** The abort reason of requests in flight to a backend that was ejected. */
export class EjectedError extends Error {
  constructor(readonly backend: string, reason: string) {
    super(`backend ${backend} was ejected: ${reason}`);
    this.name = "EjectedError";
  }
}

/** `router.outlier` as {@linkcode OutlierSettings}. */
export function outlierSettings(config: Pick<Config, "router">): OutlierSettings {
  const outlier = config.router.outlier;
  return {
    ejectAfter: outlier.eject_after,
    readmitAfter: outlier.readmit_after,
    panicThreshold: outlier.panic_threshold,
    lagAllowanceMs: outlier.lag_allowance,
  };
}
