/**
 * @module The router's view of its backends: health, models served, in-flight work.
 *
 * Design: every `healthIntervalMs` one round checks each backend's `/v2/health/ready`
 * (rounds never overlap; the next is scheduled when one ends). A failed check — or a
 * connection failure the forwarder reports through `markDown()` — takes a backend out
 * of rotation; the next passing check brings it back, after re-reading the metadata of
 * every known model from it. Known model names come from the options, from `models` in
 * ready details, and from `discoverModel()`, which asks healthy backends about a name a
 * client requested (misses are remembered for one interval, bounded, so probing random
 * names cannot amplify into backend traffic). Invariant: every healthy backend has been
 * asked about every known name, so `candidates(model)` is complete.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import {
  type BackendClientOptions,
  checkReady,
  fetchModelMetadata,
  type MetadataResult,
} from "./backend_client.ts";
import { type BackendState, newBackendState, snapshot } from "./_backend_state.ts";
import { ExpiringSet } from "./_expiring_set.ts";
import type { BackendView } from "./backend_view.ts";
import { announcedModels, type CatalogEntry, MODEL_NAME } from "./model_catalog.ts";
import { PeriodicRounds } from "../runtime/periodic_rounds.ts";

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
}

/** Tracks configured backends; see the module doc for the health and catalog rules. */
export class BackendPool {
  readonly #options: BackendPoolOptions;
  readonly #backends: BackendState[] = [];
  readonly #knownModels = new Set<string>();
  readonly #misses = new ExpiringSet(1024);
  readonly #discoveries = new Map<string, Promise<CatalogEntry | undefined>>();
  readonly #rounds: PeriodicRounds;

  constructor(urls: readonly string[], options: BackendPoolOptions) {
    this.#options = options;
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
    config: Config,
    deps: { fetch: FetchLike; clock: Clock; logger: Logger },
  ): BackendPool {
    return new BackendPool(config.router.backends, {
      ...deps,
      healthIntervalMs: config.router.health_interval,
      healthTimeoutMs: config.router.health_timeout,
      internalToken: config.auth.internal_token,
    });
  }

  /**
   * Adds a member (e.g. a backend a scaler started); it joins rotation once a check
   * passes — one runs now. False when it is already a member.
   */
  add(raw: string): boolean {
    const url = raw.replace(/\/+$/, "");
    const id = new URL(url).host;
    if (this.#backends.some((backend) => backend.id === id)) return false;
    this.#backends.push(newBackendState(id, url));
    this.#options.logger.info("backend added", { event: "backend_added", backend: id, url });
    void this.checkNow();
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
  stop(): Promise<void> {
    return this.#rounds.stop();
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

  /** Healthy backends serving `model` with the catalog's `d_model`, in config order. */
  candidates(model: string): BackendView[] {
    const entry = this.model(model);
    if (entry === undefined) return [];
    return this.#backends
      .filter((backend) =>
        backend.status === "up" && backend.models.get(model)?.dModel === entry.dModel
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
    return this.catalog().get(name);
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

  /** Takes backend `id` out of rotation until its next passing check (a connection failure). */
  markDown(id: string, reason: string): void {
    // A backend removed by discovery while a request to it was failing: nothing to mark.
    const backend = this.#backends.find((candidate) => candidate.id === id);
    if (backend !== undefined) this.#setDown(backend, reason);
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
    await Promise.all(this.#backends.map((backend) => this.#check(backend)));
  }

  async #check(backend: BackendState): Promise<void> {
    try {
      const signal = this.#rounds.signal;
      const result = await checkReady(backend.url, this.#client());
      if (signal.aborted) return;
      backend.checkedAt = this.#options.clock.now();
      if (result.details !== undefined) backend.details = result.details;
      if (!result.ready) return this.#setDown(backend, result.reason);
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
      this.#setUp(backend);
    } catch (error) {
      // A check must never take the pool down; treat surprises as a failed check.
      this.#setDown(backend, `check failed: ${(error as Error).message}`);
    }
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
    if (result.kind === "unreachable") this.#setDown(backend, result.reason);
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

  #setDown(backend: BackendState, reason: string): void {
    backend.lastError = reason;
    if (backend.status === "down") return;
    backend.status = "down";
    this.#options.logger.warn("backend down", {
      event: "backend_down",
      backend: backend.id,
      url: backend.url,
      reason,
    });
  }
}
