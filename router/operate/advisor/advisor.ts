/**
 * @module The advisor service: gathers the live inputs (balancer preview, backends'
 * batching measurements, a backend's bias evaluation), turns them into advice with the
 * pure advice functions, caches it briefly (an evaluation costs executor time), and
 * applies the live-safe recommendations on an admin's request. The first advice is
 * precomputed ({@linkcode Advisor.prepare}, from the load rounds), so even the first call
 * answers from the cache.
 */
import type { Config } from "../../../shared/config.ts";
import type { Logger } from "../../../shared/logger.ts";
import type { Balancer } from "../../control/balancer/balancer.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { Advice, AdviceId } from "./advice_types.ts";
import { type BackendBatching, batchingAdvice, type PartMeasure } from "./batching_advice.ts";
import { evaluateBias, setBias } from "./bias_client.ts";
import { biasAdvice, temperatureAdvice } from "./gate_advice.ts";
import { replacementAdvice } from "./replacement_advice.ts";
import { scalingAdvice } from "./scaling_advice.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { expertWeightBytes } from "../../../shared/model_manifest.ts";

/** What the advisor reads and calls. */
export interface AdvisorDeps {
  config: Pick<Config, "auth" | "batching" | "expert_balancer" | "gate">;
  balancer: Balancer | undefined;
  /** The pool's backends with their last readiness details. */
  views(): readonly BackendView[];
  /** `d_model`/`d_ff` of the served model, when known (expert weight bytes). */
  modelShape(): { dModel: number; dFf: number; kind?: "mlp" | "swiglu" } | undefined;
  /** The pool's load now (the load signal); absent: no scaling advice data. */
  load?: () => PoolLoad;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** How long advice is reused; default 30 000 ms. */
  cacheMs?: number;
}

/** The advice and when it was made. */
export interface AdviceReport {
  at: number;
  advice: Advice[];
  /** Precomputed without the bias evaluation; the full report is under way. */
  partial?: boolean;
  /** Whether routed-expert load was measured when it was made (false: an idle pool's advice). */
  traffic?: boolean;
}

/** Whether `load` carries routed-expert load (what the advice plans on). */
function measuredTraffic(load: PoolLoad | undefined): boolean {
  return load?.models.some((m) => m.layers.some((l) => l.expertTokensPerS.some((v) => v > 0))) ??
    false;
}

/** Shortest time between two computations of the advice, even when asked to refresh. */
const MIN_REFRESH_MS = 5000;

/** An apply request the advisor refuses (maps to 409). */
export class AdviceNotApplicable extends Error {}

function batchingOf(view: BackendView): BackendBatching | undefined {
  const details = view.details as
    | { executor?: { slots?: number }; batching?: { parts?: PartMeasure[] } }
    | undefined;
  const parts = details?.batching?.parts;
  if (!view.healthy || !Array.isArray(parts)) return undefined;
  return { backend: view.name, slots: details?.executor?.slots ?? 1, parts };
}

/** Makes and applies advice; see the module doc. */
export class Advisor {
  readonly #deps: AdvisorDeps;
  #cached: AdviceReport | undefined;
  /** The computation under way, shared by every caller meanwhile. */
  #computing: Promise<AdviceReport> | undefined;
  /** What {@linkcode prepare} precomputed: nothing, an idle pool's advice, or with load. */
  #prepared: "none" | "idle" | "loaded" = "none";
  /** Whether the computation under way includes the bias evaluation. */
  #computingFull = false;

  constructor(deps: AdvisorDeps) {
    this.#deps = deps;
  }

  /**
   * Current advice, cached for `cacheMs`; `refresh` recomputes, but never more than once
   * per `MIN_REFRESH_MS` (the route is public and a bias evaluation costs executor time).
   * An expired report is answered at once while a new one is computed in the background
   * (stale-while-revalidate: the page never waits seconds on a busy pool). A precomputed
   * report ({@linkcode prepare}, `partial`: no bias evaluation yet) is answered the same
   * way while the full computation starts. Only a first call with nothing precomputed, or
   * `refresh`, waits. Concurrent calls share one computation.
   */
  async advise(refresh = false): Promise<AdviceReport> {
    const now = this.#deps.clock.now();
    let cached = this.#cached;
    // Advice made on an idle pool never answers for traffic measured since: wait for new.
    if (cached?.traffic === false && measuredTraffic(this.#deps.load?.())) cached = undefined;
    const age = cached ? now - cached.at : Infinity;
    const limit = refresh ? MIN_REFRESH_MS : this.#deps.cacheMs ?? 30_000;
    if (cached !== undefined && !cached.partial && age < limit) return cached;
    const computing = this.#compute(true);
    if (cached !== undefined && !refresh) return cached;
    return await computing;
  }

  /**
   * Precomputes the advice in the background from a load round — once when backends
   * first report, once more when expert load first appears (the advice then has something
   * to plan on) — without the gate-bias evaluation, which runs the model on a backend
   * (executor time, counted in its metrics) and so waits for someone to ask. The first
   * `GET /api/advice` then answers from this report instead of waiting on a planner run
   * and a backend's evaluation (seconds at 61 × 256 under load), and starts the full one.
   */
  prepare(load: PoolLoad): void {
    if (this.#prepared === "loaded" || load.pool.reporting === 0) return;
    const loaded = load.models.some((m) =>
      m.layers.some((l) => l.expertTokensPerS.some((v) => v > 0))
    );
    if (!loaded && this.#prepared === "idle") return;
    // Something already computed or under way: nothing to precompute.
    if (this.#computing !== undefined || (this.#cached && !this.#cached.partial)) return;
    this.#prepared = loaded ? "loaded" : "idle";
    void this.#compute(false);
  }

  /** Starts (or joins) a computation: `full` with the bias evaluation; see {@linkcode advise}. */
  #compute(full: boolean): Promise<AdviceReport> {
    // A running precomputation (no evaluation) does not answer a request for the full one.
    if (this.#computing === undefined || (full && !this.#computingFull)) {
      const work = this.#evaluate(full).finally(() => {
        if (this.#computing === work) this.#computing = undefined;
      });
      this.#computing = work;
      this.#computingFull = full;
      work.catch(() => {}); // a background refresh that fails leaves the old report
    }
    return this.#computing;
  }

  async #evaluate(full: boolean): Promise<AdviceReport> {
    const now = this.#deps.clock.now();
    const { config } = this.#deps;
    const healthy = this.#deps.views().filter((view) => view.healthy);
    const [replacement, bias] = await Promise.all([
      this.#replacement(),
      !full
        ? Promise.resolve({
          error: "not evaluated yet: the first request for advice starts the evaluation on a " +
            "backend (it runs the model on recorded inputs); refresh in a few seconds",
        })
        : healthy.length === 0
        ? Promise.resolve({ error: "no healthy backend to evaluate on" })
        : evaluateBias(healthy[0]!, this.#clientOptions()),
    ]);
    const advice = [
      replacement,
      batchingAdvice(this.#deps.views().flatMap((v) => batchingOf(v) ?? []), config.batching),
      temperatureAdvice(config.gate.temperature),
      biasAdvice(bias, config.gate.bias_deviation_budget),
      scalingAdvice(this.#deps.load?.()),
    ];
    const traffic = measuredTraffic(this.#deps.load?.());
    const report: AdviceReport = full
      ? { at: now, advice, traffic }
      : { at: now, advice, partial: true, traffic };
    // A precomputation finishing late never replaces a full report.
    if (full || this.#cached === undefined || this.#cached.partial) this.#cached = report;
    return report;
  }

  async #replacement(): Promise<Advice> {
    const { balancer, config } = this.#deps;
    const shape = this.#deps.modelShape();
    const bytes = shape ? expertWeightBytes(shape.dModel, shape.dFf, shape.kind) : 0;
    // The measured balancedness now: the same aggregate the header and /metrics read.
    const pool = this.#deps.load?.().pool;
    const base = {
      expertBytes: bytes,
      threshold: config.expert_balancer.threshold,
      now: pool && pool.reporting > 0
        ? { balancedness: pool.balancedness, worstLayer: pool.worstLayer ?? null }
        : undefined,
    };
    if (balancer === undefined) {
      return replacementAdvice({
        ...base,
        preview: undefined,
        reason: "no balancer: Deno KV is not available to this router",
      });
    }
    try {
      return replacementAdvice({ ...base, preview: await balancer.preview() });
    } catch (error) {
      return replacementAdvice({ ...base, preview: undefined, reason: (error as Error).message });
    }
  }

  #clientOptions() {
    return { fetch: this.#deps.fetch, internalToken: this.#deps.config.auth.internal_token };
  }

  /**
   * Applies the live-safe advice `id` exactly as last shown (the cached report), so an
   * operator applies what they read. Throws {@linkcode AdviceNotApplicable} otherwise.
   */
  async apply(id: AdviceId): Promise<Record<string, unknown>> {
    const advice = this.#cached?.advice.find((a) => a.id === id);
    if (advice === undefined) {
      throw new AdviceNotApplicable(`Cannot apply "${id}": get /api/advice first`);
    }
    if (!advice.recommended || advice.apply !== "live") {
      throw new AdviceNotApplicable(
        `Cannot apply "${id}": it is not a live recommendation (apply: ${advice.apply})`,
      );
    }
    this.#cached = undefined;
    if (id === "replacement") {
      const result = await this.#deps.balancer!.apply({
        phy2log: advice.details["phy2log"] as number[][],
      });
      return { version: result.version, previous: result.previous, moved: result.moved };
    }
    const healthy = this.#deps.views().filter((view) => view.healthy);
    const outcomes = await setBias(
      healthy,
      advice.details["bias"] as number[][],
      this.#clientOptions(),
    );
    return { backends: outcomes };
  }

  /** Clears the routing-only bias on every healthy backend. */
  async clearBias(): Promise<Record<string, unknown>> {
    this.#cached = undefined;
    const healthy = this.#deps.views().filter((view) => view.healthy);
    return { backends: await setBias(healthy, null, this.#clientOptions()) };
  }
}
