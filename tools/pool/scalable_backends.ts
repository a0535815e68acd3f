/**
 * @module The launcher's backends as the `local` scaler sees them: the pool's first
 * backends plus those started on request, each kept alive by a {@linkcode Supervisor},
 * and stopped (SIGTERM, then SIGKILL after the grace time) when the router names them —
 * it drains a backend before it asks. `launcher_control.ts` serves this over HTTP.
 *
 * Design.
 * - `setTarget({target, remove})`: first the named backends are stopped, then backends are
 *   started until `target` run (starting or ready); a target below what runs stops nothing
 *   by itself (only drained backends are ever stopped).
 * - A started backend is `starting` from the request until its supervisor's first start
 *   resolves (spawn → `/v2/health/ready`), then `ready`; `requested_at` and `ready_at`
 *   are the launcher's clock, so the router measures request → ready from them.
 * - `injectedColdStartMs` (a labelled bench/test option, default 0) waits that long
 *   between the request and the spawn — an image pull or weight download on a GPU host —
 *   so the lead time matters on a machine where a backend starts in seconds.
 * - A backend that does not start is dropped and logged; the router sees it never
 *   becomes ready (its contract escalates).
 */
import { type Clock, systemClock, type TimerHandle } from "../../router/runtime/clock.ts";
import type { LauncherBackends } from "../../router/control/prewarm/local_scaler.ts";
import { type ChildHandle, Supervisor } from "./supervisor.ts";

/** One backend the launcher runs. */
interface Entry {
  name: string;
  url: string;
  port: number;
  state: "starting" | "ready" | "stopping";
  requestedAt: number;
  readyAt: number | null;
  scaled: boolean;
  supervisor: Supervisor | undefined;
  timer: TimerHandle | undefined;
}

/** Options of {@linkcode ScalableBackends}. */
export interface ScalableBackendsOptions {
  /** First port of scaled backends; the k-th free offset is used. */
  basePort: number;
  /** Spawns a backend process listening on `port` under the id `name`. */
  spawn(name: string, port: number): ChildHandle;
  /** Resolves once the child at `url` serves. */
  ready(url: string, child: ChildHandle): Promise<void>;
  log(line: string): void;
  /** Bench/test option: wait this long before each scaled backend's spawn (ms); default 0. */
  injectedColdStartMs?: number;
  /** Called when the list changes. */
  onChange?(): void;
  clock?: Clock;
  /** Supervisor grace between SIGTERM and SIGKILL (ms); default 10 s. */
  stopGraceMs?: number;
}

/** The launcher's backends; see the module doc. */
export class ScalableBackends {
  readonly #options: ScalableBackendsOptions;
  readonly #clock: Clock;
  readonly #entries: Entry[] = [];
  #target = 0;
  #scaledCount = 0;
  #closed = false;

  constructor(options: ScalableBackendsOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Registers one of the pool's first backends (already started by the launcher). */
  adopt(name: string, url: string, supervisor: Supervisor): void {
    const now = this.#clock.now();
    this.#entries.push({
      name,
      url,
      port: Number(new URL(url).port),
      state: "ready",
      requestedAt: now,
      readyAt: now,
      scaled: false,
      supervisor,
      timer: undefined,
    });
    this.#target = this.#running().length;
  }

  /** The list the control API answers. */
  list(): LauncherBackends {
    return {
      target: this.#target,
      backends: this.#entries.map((e) => ({
        name: e.name,
        url: e.url,
        state: e.state,
        requested_at: e.requestedAt,
        ready_at: e.readyAt,
        scaled: e.scaled,
      })),
    };
  }

  /** Supervisors of the backends running now (the status file). */
  supervisors(): { url: string; supervisor: Supervisor }[] {
    return this.#entries.flatMap((e) =>
      e.supervisor === undefined ? [] : [{ url: e.url, supervisor: e.supervisor }]
    );
  }

  /** Stops `remove`, then starts backends until `target` run; answers the new list. */
  setTarget(request: { target: number; remove?: readonly string[] }): LauncherBackends {
    if (!Number.isInteger(request.target) || request.target < 0) {
      throw new RangeError(`Cannot scale: target must be an integer ≥ 0, got ${request.target}`);
    }
    for (const url of request.remove ?? []) {
      const entry = this.#entries.find((e) => e.url === url.replace(/\/+$/, ""));
      if (entry !== undefined && entry.state !== "stopping") void this.#stop(entry);
    }
    this.#target = request.target;
    const running = this.#running().length;
    if (request.target < running) {
      this.#options.log(
        `target ${request.target} < ${running} running: waiting for the router to drain and name them`,
      );
    }
    for (let i = running; i < request.target && !this.#closed; i++) this.#start();
    this.#options.onChange?.();
    return this.list();
  }

  /** Stops every backend it started on request (the launcher stops the first ones itself). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#entries.filter((e) => e.scaled).map((e) => this.#stop(e)));
  }

  #running(): Entry[] {
    return this.#entries.filter((e) => e.state !== "stopping");
  }

  #start(): void {
    const used = new Set(this.#entries.map((e) => e.port));
    let port = this.#options.basePort;
    while (used.has(port)) port++;
    const name = `backend-scaled-${++this.#scaledCount}`;
    const entry: Entry = {
      name,
      url: `http://127.0.0.1:${port}`,
      port,
      state: "starting",
      requestedAt: this.#clock.now(),
      readyAt: null,
      scaled: true,
      supervisor: undefined,
      timer: undefined,
    };
    this.#entries.push(entry);
    const delay = this.#options.injectedColdStartMs ?? 0;
    this.#options.log(
      `starting ${name} on ${entry.url}${
        delay > 0 ? ` after an injected cold start of ${(delay / 1000).toFixed(1)} s` : ""
      }`,
    );
    const spawn = () => {
      entry.timer = undefined;
      if (entry.state === "stopping") return;
      const supervisor = new Supervisor({
        name,
        clock: this.#clock,
        spawn: () => this.#options.spawn(name, port),
        ready: (child) => this.#options.ready(entry.url, child),
        log: this.#options.log,
        onChange: () => this.#options.onChange?.(),
        ...(this.#options.stopGraceMs === undefined
          ? {}
          : { stopGraceMs: this.#options.stopGraceMs }),
      });
      entry.supervisor = supervisor;
      supervisor.start().then(() => {
        if (entry.state !== "starting") return;
        entry.state = "ready";
        entry.readyAt = this.#clock.now();
        this.#options.log(
          `${name} ready after ${((entry.readyAt - entry.requestedAt) / 1000).toFixed(1)} s`,
        );
        this.#options.onChange?.();
      }, (error) => {
        this.#options.log(`${name} did not start: ${(error as Error).message}`);
        this.#drop(entry);
      });
    };
    if (delay > 0) entry.timer = this.#clock.setTimeout(spawn, delay);
    else spawn();
  }

  async #stop(entry: Entry): Promise<void> {
    entry.state = "stopping";
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    this.#options.onChange?.();
    this.#options.log(`stopping ${entry.name} (${entry.url})`);
    await entry.supervisor?.stop();
    this.#drop(entry);
  }

  #drop(entry: Entry): void {
    const index = this.#entries.indexOf(entry);
    if (index >= 0) this.#entries.splice(index, 1);
    this.#options.onChange?.();
  }
}
