/**
 * @module Polls every backend's load report and keeps the pool's load current.
 *
 * Design: every `intervalMs` one round asks `GET /v2/load` of each backend in the pool
 * (healthy or not; rounds never overlap, the next is scheduled when one ends), with the
 * internal token. **No backend can hold a round**: each poll runs on its own, limited by
 * `timeoutMs` (two intervals); a backend whose poll is still out is not asked again; the round waits for
 * its polls at most `roundWaitMs` and aggregates what has arrived (a late answer counts
 * in the next round; a poll that times out marks its backend stale at once). So a stopped
 * backend is stale within two rounds while the others keep fresh reports. Per backend it
 * keeps the latest two reports of one run and the rates between them; a backend that
 * restarted starts a new pair. A failed poll keeps the old reports but marks the backend
 * stale, so routing falls back to in-flight counts for it; nothing a backend answers can
 * break a round. After each round `onRound` gets the aggregate (alerts, the dashboard,
 * the leader's series); it runs beside the polls, one at a time — a slow one never delays
 * the next round, whose aggregate it gets next (rounds in between are skipped).
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import type { Logger } from "../../../shared/logger.ts";
import { fetchLoadReport } from "../../serve/pool/backend_client.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { BackendLoadSignal } from "../../serve/entry/load_weighted.ts";
import { type ReportRates, reportRates, sameRun } from "./load_rates.ts";
import { aggregatePoolLoad, type BackendLoadSample, isFresh, type PoolLoad } from "./pool_load.ts";
import { PeriodicRounds } from "../../runtime/periodic_rounds.ts";
import { LatestRunner } from "../../runtime/latest_runner.ts";
import { type CapacityMemory, rememberCapacity } from "./saturation.ts";
import { type ColdStartHistory, coldStartTotal, rememberColdStarts } from "./cold_start_window.ts";

/** Options of {@linkcode LoadCollector}. */
export interface LoadCollectorOptions {
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Time between the end of one round and the start of the next; default 1000 ms. */
  intervalMs?: number;
  /**
   * Limit of each call; default 2 × `intervalMs` (a poll runs beside the rounds, so a slow
   * answer on a busy machine is not a failure while a stopped backend still is within two
   * rounds).
   */
  timeoutMs?: number;
  /** How long a round waits for its polls before it aggregates; default `intervalMs / 2`. */
  roundWaitMs?: number;
  /** A report older than this is stale; default 3 × `intervalMs`. */
  staleAfterMs?: number;
  /** Bearer token backends require; never logged. */
  internalToken?: string | undefined;
  /** Utilisation the scaling advice plans for (`prewarm.threshold`); default 0.8. */
  scaleTarget?: number;
  /** Most backends the scaling advice recommends (`prewarm.max_backends`); default 8. */
  maxBackends?: number;
  /**
   * Requests this router has shed itself because the pool was at its limits (cumulative,
   * e.g. 429 `router_full` + `backends_full`), and admitted (cumulative); the pool's
   * saturation counts them. Absent: backends' own counts only.
   */
  routerCounts?: () => { shed: number; admitted: number };
  /** How long a capacity measured at saturation is remembered; default 10 minutes. */
  capacityMemoryMs?: number;
  /** Called with the aggregate after every round; errors are logged, never thrown. */
  onRound?: (load: PoolLoad) => void | Promise<void>;
}

interface BackendLoadState {
  id: string;
  name: string;
  previous: LoadReport | undefined;
  current: LoadReport | undefined;
  rates: ReportRates | undefined;
  receivedAt: number | undefined;
  error: string | undefined;
  /** The last poll failed (to log transitions, not every failed poll). */
  failing: boolean;
}

/** Polls `/v2/load` of every pool backend; see the module doc. */
export class LoadCollector {
  /** Time between rounds (ms). */
  readonly intervalMs: number;
  /** Age after which a report is stale (ms). */
  readonly staleAfterMs: number;
  readonly #pool: { views(): readonly BackendView[] };
  readonly #options: LoadCollectorOptions;
  readonly #timeoutMs: number;
  readonly #states = new Map<string, BackendLoadState>();
  readonly #rounds: PeriodicRounds;
  #capacity: CapacityMemory = new Map();
  #coldStarts: ColdStartHistory = new Map();
  #routerLast: { at: number; shed: number; admitted: number } | undefined;
  #routerRates: { shedPerS: number; admittedPerS: number } | undefined;
  /** Polls still out, by backend id (never two at once for one backend). */
  readonly #polling = new Map<string, Promise<void>>();
  /** Runs `onRound` beside the rounds, on the latest aggregate. */
  readonly #handler: LatestRunner<void> | undefined;

  constructor(pool: { views(): readonly BackendView[] }, options: LoadCollectorOptions) {
    this.#pool = pool;
    this.#options = options;
    this.intervalMs = options.intervalMs ?? 1000;
    this.#timeoutMs = options.timeoutMs ?? 2 * this.intervalMs;
    this.staleAfterMs = options.staleAfterMs ?? 3 * this.intervalMs;
    this.#rounds = new PeriodicRounds(options.clock, this.intervalMs, () => this.#runRound());
    const onRound = options.onRound;
    this.#handler = onRound && new LatestRunner<void>(
      // The aggregate as it is when the handler gets to run (the latest round's).
      () => onRound(this.snapshot()),
      (error) =>
        options.logger.warn("load round handler failed", { error: (error as Error).message }),
    );
  }

  /** Runs a first round, then one every interval until `stop()`. */
  start(): Promise<void> {
    return this.#rounds.start();
  }

  /** Stops polling, aborts calls in progress and waits for the current round to end. */
  async stop(): Promise<void> {
    await this.#rounds.stop();
    await Promise.all(this.#polling.values());
    await this.settled();
  }

  /** Resolves when the `onRound` work started so far has finished. */
  settled(): Promise<void> {
    return this.#handler?.settled() ?? Promise.resolve();
  }

  /** Polls every backend once (joins the round in progress, if any) and waits for `onRound`. */
  async pollNow(): Promise<void> {
    await this.#rounds.runNow();
    await this.settled();
  }

  /** The pool's load now. */
  snapshot(): PoolLoad {
    return aggregatePoolLoad(this.#samples(), this.#aggregateOptions());
  }

  /** Backend `id`'s utilisation and in-flight work; `undefined` without fresh rates. */
  loadOf(id: string): BackendLoadSignal | undefined {
    const state = this.#states.get(id);
    if (state === undefined || state.rates === undefined) return undefined;
    if (!isFresh(this.#sample(state), this.#aggregateOptions())) return undefined;
    return {
      utilisation: state.rates.backend.utilisation,
      inFlight: state.current!.inFlightRequests,
    };
  }

  /** The latest report of every pool backend whose last poll answered. */
  latestReports(): LoadReport[] {
    return this.#pool.views().flatMap((view) => {
      const state = this.#states.get(view.id);
      return state?.current !== undefined && state.error === undefined ? [state.current] : [];
    });
  }

  /** The latest reports of backend `id` (at most two, oldest first). */
  reports(id: string): LoadReport[] {
    const state = this.#states.get(id);
    return [state?.previous, state?.current].filter((report) => report !== undefined);
  }

  #aggregateOptions() {
    return {
      now: this.#options.clock.now(),
      staleAfterMs: this.staleAfterMs,
      capacityMemory: this.#capacity,
      coldStarts: this.#coldStarts,
      ...(this.#options.scaleTarget !== undefined
        ? { scaleTarget: this.#options.scaleTarget }
        : {}),
      ...(this.#options.maxBackends !== undefined
        ? { maxBackends: this.#options.maxBackends }
        : {}),
      // The router's own sheds (429 at its in-flight limits) are saturation too.
      ...(this.#routerRates !== undefined ? { router: this.#routerRates } : {}),
    };
  }

  #sample(state: BackendLoadState): BackendLoadSample {
    return {
      id: state.id,
      name: state.name,
      report: state.current,
      rates: state.rates,
      receivedAt: state.receivedAt,
      error: state.error,
    };
  }

  #samples(): BackendLoadSample[] {
    return this.#pool.views().map((view) => this.#sample(this.#state(view)));
  }

  #state(view: BackendView): BackendLoadState {
    let state = this.#states.get(view.id);
    if (state === undefined) {
      state = {
        id: view.id,
        name: view.name,
        previous: undefined,
        current: undefined,
        rates: undefined,
        receivedAt: undefined,
        error: "no report yet",
        failing: false,
      };
      this.#states.set(view.id, state);
    }
    state.name = view.name;
    return state;
  }

  async #runRound(): Promise<void> {
    const started = this.#pool.views().flatMap((view) => {
      if (this.#polling.has(view.id)) return [];
      const poll = this.#poll(view).finally(() => this.#polling.delete(view.id));
      this.#polling.set(view.id, poll);
      return [poll];
    });
    await this.#waitAtMost(Promise.all(started), this.#options.roundWaitMs ?? this.intervalMs / 2);
    if (this.#rounds.signal.aborted) return;
    this.#rateRouter();
    this.#coldStarts = rememberColdStarts(
      this.#coldStarts,
      [...this.#states.values()].map((state) => ({
        id: state.id,
        at: state.receivedAt ?? -Infinity,
        total: coldStartTotal(state.current),
      })),
    );
    // Capacities measured at saturation outlive the round that measured them.
    const load = this.snapshot();
    this.#capacity = rememberCapacity(
      this.#capacity,
      load.backends.filter((b) => !b.stale).map((b) => ({
        id: b.id,
        saturation: b.saturation?.value,
        tokensPerS: b.tokensPerS,
      })),
      load.at,
      this.#options.capacityMemoryMs ?? 600_000,
    );
    this.#handler?.offer();
  }

  /** Waits for `work`, or `ms` on the clock, whichever comes first. */
  async #waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
    const { clock } = this.#options;
    let timer: unknown;
    const timeout = new Promise<void>((resolve) => timer = clock.setTimeout(resolve, ms));
    await Promise.race([work, timeout]);
    clock.clearTimeout(timer);
  }

  /** The router's own shed and admitted rates since the previous round. */
  #rateRouter(): void {
    const counts = this.#options.routerCounts?.();
    if (counts === undefined) return;
    const at = this.#options.clock.now();
    const last = this.#routerLast;
    this.#routerLast = { at, ...counts };
    if (last === undefined || !(at > last.at)) return;
    const perS = (now: number, then: number) => Math.max(0, now - then) * 1000 / (at - last.at);
    this.#routerRates = {
      shedPerS: perS(counts.shed, last.shed),
      admittedPerS: perS(counts.admitted, last.admitted),
    };
  }

  async #poll(view: BackendView): Promise<void> {
    const state = this.#state(view);
    const signal = this.#rounds.signal;
    let result;
    try {
      result = await fetchLoadReport(view.url, {
        fetch: this.#options.fetch,
        clock: this.#options.clock,
        timeoutMs: this.#timeoutMs,
        internalToken: this.#options.internalToken,
        signal,
      });
    } catch (error) {
      // A poll must never take the collector down; treat surprises as a failed poll.
      result = { kind: "error", reason: `poll failed: ${(error as Error).message}` } as const;
    }
    if (signal.aborted) return;
    if (result.kind === "error") {
      if (!state.failing) {
        this.#options.logger.warn("load report unavailable", {
          backend: state.id,
          reason: result.reason,
        });
      }
      state.error = result.reason;
      state.failing = true;
      return;
    }
    if (state.failing) this.#options.logger.info("load report available", { backend: state.id });
    state.failing = false;
    const report = result.report;
    if (state.current?.uptimeMs === report.uptimeMs && state.current.backend === report.backend) {
      // The same report again (no time passed on the backend): nothing new to rate.
    } else if (state.current !== undefined && sameRun(state.current, report)) {
      state.previous = state.current;
      state.rates = reportRates(state.previous, report);
    } else {
      // First report, or the backend restarted: rates need a second report of this run.
      state.previous = undefined;
      state.rates = undefined;
    }
    state.current = report;
    state.receivedAt = this.#options.clock.now();
    state.error = undefined;
  }
}
