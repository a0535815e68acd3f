/**
 * @module A backend pool and a scaler in virtual time, for driving the production
 * pre-warm job (`PrewarmJob`, its capacity controller) without processes: the capacity
 * simulator (`capacity_fleet.ts`) and the forecast-driven capacity backtest use them.
 *
 * - {@linkcode VirtualPool}: members with roles (active, standby, draining), each ready as
 *   soon as it is added (the scaler adds only ready ones), no requests in flight.
 * - {@linkcode VirtualScaler}: `scale()` starts what is missing, each backend ready after
 *   its own cold start (`coldStartMs()`, drawn per backend), stops those named; `ready()`
 *   answers the started backends whose cold start has passed, as the launcher does.
 *   `running()` counts what holds an accelerator (started, not stopped): backend-seconds.
 */
import type {
  PoolMember,
  PoolPort,
  ScaledBackend,
  Scaler,
  ScaleRequest,
  ScalerOutcome,
} from "../../router/control/prewarm/prewarm_types.ts";
import type { BackendRole } from "../../router/serve/pool/backend_view.ts";

/** Options of {@linkcode VirtualPool}. */
export interface VirtualPoolOptions {
  /** The model every ready member serves; default `sim`. */
  model?: string;
  /** Whether members added later are ready at once (default true; the first ones are). */
  addedReady?: boolean;
}

/** A pool in virtual time; see the module doc. */
export class VirtualPool implements PoolPort {
  readonly members: (PoolMember & { role: BackendRole })[] = [];
  readonly #model: string;
  readonly #addedReady: boolean;
  #admitAs: ((url: string) => BackendRole) | undefined;

  constructor(urls: readonly string[], options: VirtualPoolOptions = {}) {
    this.#model = options.model ?? "sim";
    this.#addedReady = options.addedReady ?? true;
    for (const url of urls) this.#push(url, "active", true);
  }

  views(): readonly PoolMember[] {
    return this.members;
  }

  add(url: string, options: { role?: BackendRole }): boolean {
    if (this.members.some((m) => m.url === url)) return false;
    this.#push(url, options.role ?? this.#admitAs?.(url) ?? "active", this.#addedReady);
    return true;
  }

  setRole(url: string, role: BackendRole): boolean {
    const member = this.members.find((m) => m.url === url);
    if (member === undefined) return false;
    member.role = role;
    return true;
  }

  remove(url: string): boolean {
    const index = this.members.findIndex((m) => m.url === url);
    if (index < 0) return false;
    this.members.splice(index, 1);
    return true;
  }

  admitAs(rule: ((url: string) => BackendRole) | undefined): void {
    this.#admitAs = rule;
  }

  /** Members with `role`, as plans name them. */
  withRole(role: BackendRole): { id: string; url: string }[] {
    return this.members.filter((m) => m.role === role).map((m) => ({ id: m.name, url: m.url }));
  }

  #push(url: string, role: BackendRole, ready: boolean): void {
    const name = new URL(url).host;
    this.members.push({
      name,
      url,
      role,
      healthy: ready,
      inFlight: 0,
      models: ready ? [this.#model] : [],
      details: ready ? { backend_id: name } : undefined,
    });
  }
}

/** Options of {@linkcode VirtualScaler}. */
export interface VirtualScalerOptions {
  now: () => number;
  /** One backend's cold start (ms), drawn per backend. */
  coldStartMs: () => number;
  /** Backends already running (the pool's first ones). */
  initial: readonly string[];
  /** URL of the k-th backend started; default `http://sim-<k>`. */
  urlOf?: (k: number) => string;
}

/** Starts and stops backends in virtual time; see the module doc. */
export class VirtualScaler implements Scaler {
  readonly name = "virtual";
  readonly acts = true;
  readonly #options: VirtualScalerOptions;
  readonly #running = new Map<string, { requestedAt: number; readyAt: number }>();
  #started = 0;

  constructor(options: VirtualScalerOptions) {
    this.#options = options;
    for (const url of options.initial) this.#running.set(url, { requestedAt: 0, readyAt: 0 });
  }

  scale(request: ScaleRequest): Promise<ScalerOutcome> {
    for (const url of request.remove) this.#running.delete(url);
    const started: string[] = [];
    const now = this.#options.now();
    while (this.#running.size < request.target) {
      const k = ++this.#started;
      const url = this.#options.urlOf?.(k) ?? `http://sim-${k}`;
      this.#running.set(url, { requestedAt: now, readyAt: now + this.#options.coldStartMs() });
      started.push(url);
    }
    return Promise.resolve({
      scaler: this.name,
      status: "requested",
      started,
      removed: request.remove,
    });
  }

  ready(): Promise<ScaledBackend[]> {
    const now = this.#options.now();
    return Promise.resolve(
      [...this.#running].flatMap(([url, b]) =>
        b.requestedAt > 0 && b.readyAt <= now
          ? [{ url, requestedAt: b.requestedAt, readyAt: b.readyAt }]
          : []
      ),
    );
  }

  /** Backends holding an accelerator now (started, not stopped). */
  running(): number {
    return this.#running.size;
  }

  /** Of those, ready. */
  readyCount(): number {
    const now = this.#options.now();
    return [...this.#running.values()].filter((b) => b.readyAt <= now).length;
  }
}
