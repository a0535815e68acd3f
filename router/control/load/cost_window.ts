/**
 * @module The placement planner's cost inputs over a sliding window of load rounds: the
 * remote-row cost and the expert-row cost (`remote_row_cost.ts`) measured over the last
 * `windowMs`, each with its provenance — "measured" (this window, or the last window that
 * had enough rows: a pool that stopped crossing keeps its last measurement), else
 * "assumed" (a stated default). It also keeps the pool-wide hop counters since start
 * (the `switchyard_eplb_hop_*` metrics).
 *
 * Every round ({@linkcode PlacementCostWindow.record}) adds, per fresh backend, the peer
 * counters' Δ of its latest report interval — once per report (`peer.at`), so a round
 * whose poll failed does not count an interval twice — and its device-busy ms and
 * routed-expert rows per second (utilisation × slots, Σ expert tokens/s).
 */
import type { PeerReport } from "../../../shared/load_report.ts";
import type { BackendLoad } from "./pool_load.ts";
import { addPeer, expertRowCost, NO_PEER, remoteRowCost } from "./remote_row_cost.ts";

/**
 * Remote-row cost used before any row crossed backends (ms). Assumed: about a loopback
 * round trip (~0.03 ms) plus packing and decoding a row's frame on both sides.
 */
export const DEFAULT_REMOTE_ROW_MS = 0.1;
/**
 * Expert-row cost used before anything was measured (ms). Derived from a measurement:
 * docs/results/hop.md's single-thread MatMul limit of the demo model on this machine,
 * 12,478 tokens/s per core at top-2 → 1000 ÷ 12,478 ÷ 2 ≈ 0.040 ms per expert row.
 */
export const DEFAULT_EXPERT_ROW_MS = 0.04;

/** One cost with where it came from. */
export interface CostEstimate {
  /** Milliseconds per row. */
  ms: number;
  source: "measured" | "assumed";
  /** How it was measured (window, rows, parts) or why the default. */
  detail: string;
  /** Router clock ms of the measurement; null when assumed. */
  at: number | null;
}

/** The remote-row cost with its parts (ms per row; null when assumed). */
export interface RemoteRowEstimate extends CostEstimate {
  parts: { exposedMs: number; sendCpuMs: number; serveCpuMs: number } | null;
}

/** The planner's cost inputs now. */
export interface PlacementCosts {
  remoteRow: RemoteRowEstimate;
  expertRow: CostEstimate;
}

/** Costs when nothing was measured: both defaults, "assumed". */
export function assumedCosts(): PlacementCosts {
  return {
    remoteRow: {
      ms: DEFAULT_REMOTE_ROW_MS,
      source: "assumed",
      detail: `assumed ${DEFAULT_REMOTE_ROW_MS} ms: no row has crossed backends yet ` +
        "(about a loopback round trip plus packing and decoding a row's frame on both sides)",
      at: null,
      parts: null,
    },
    expertRow: {
      ms: DEFAULT_EXPERT_ROW_MS,
      source: "assumed",
      detail: `assumed ${DEFAULT_EXPERT_ROW_MS} ms: nothing executed yet (the demo model's ` +
        "single-thread MatMul limit on the reference machine, docs/results/hop.md)",
      at: null,
    },
  };
}

/** Options of {@linkcode PlacementCostWindow}. */
export interface PlacementCostWindowOptions {
  /** How far back a measurement reaches (ms); default 60 000. */
  windowMs?: number;
}

/** What a round must say about each backend (a `PoolLoad` fits). */
export interface CostRound {
  /** Router clock ms. */
  at: number;
  backends: readonly Pick<
    BackendLoad,
    "id" | "stale" | "utilisation" | "slots" | "expertLayers" | "peer"
  >[];
}

interface Round {
  at: number;
  peer: PeerReport;
  busyMs: number;
  rows: number;
}

/** Cost inputs over recent load rounds; see the module doc. */
export class PlacementCostWindow {
  readonly windowMs: number;
  readonly #rounds: Round[] = [];
  readonly #reportAt = new Map<string, number>();
  #total: PeerReport = { ...NO_PEER };
  #lastRemote: RemoteRowEstimate | undefined;
  #lastExpert: CostEstimate | undefined;
  /** Whether the latest round's window measured each cost (else the last one is older). */
  #fresh = { remote: false, expert: false };

  constructor(options: PlacementCostWindowOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
  }

  /** Adds one load round. */
  record(load: CostRound): void {
    let peer: PeerReport = { ...NO_PEER };
    let busyMs = 0;
    let rows = 0;
    for (const backend of load.backends) {
      if (backend.stale) continue;
      if (backend.peer !== undefined && this.#reportAt.get(backend.id) !== backend.peer.at) {
        this.#reportAt.set(backend.id, backend.peer.at);
        peer = addPeer(peer, backend.peer.delta);
      }
      if (backend.utilisation === undefined || backend.expertLayers === undefined) continue;
      busyMs += backend.utilisation * (backend.slots ?? 1) * 1000;
      for (const layer of backend.expertLayers) {
        for (const rate of layer.expertTokensPerS) rows += rate;
      }
    }
    this.#total = addPeer(this.#total, peer);
    this.#rounds.push({ at: load.at, peer, busyMs, rows });
    while (this.#rounds.length > 0 && this.#rounds[0]!.at <= load.at - this.windowMs) {
      this.#rounds.shift();
    }
    this.#measure(load.at);
  }

  /** Pool-wide peer counters since this router started (every interval once). */
  totals(): PeerReport {
    return { ...this.#total };
  }

  /** The costs now: this window's, else the last measured, else assumed. */
  estimates(now: number): PlacementCosts {
    const assumed = assumedCosts();
    return {
      remoteRow: this.#lastRemote === undefined
        ? assumed.remoteRow
        : this.#fresh.remote
        ? this.#lastRemote
        : aged(this.#lastRemote, now, "too few rows crossed backends since"),
      expertRow: this.#lastExpert === undefined
        ? assumed.expertRow
        : this.#fresh.expert
        ? this.#lastExpert
        : aged(this.#lastExpert, now, "too few rows executed since"),
    };
  }

  #measure(now: number): void {
    let peer: PeerReport = { ...NO_PEER };
    let busyMs = 0;
    let rows = 0;
    for (const round of this.#rounds) {
      peer = addPeer(peer, round.peer);
      busyMs += round.busyMs;
      rows += round.rows;
    }
    const seconds = Math.round(this.windowMs / 1000);
    const remote = remoteRowCost(peer);
    this.#fresh = { remote: remote !== null, expert: false };
    if (remote !== null) {
      this.#lastRemote = {
        ms: remote.ms,
        source: "measured",
        detail: `measured over ${Math.round(remote.rows)} remote rows in the last ${seconds} s: ` +
          `exposed beyond peer serving ${ms(remote.exposedMs)} + send CPU ${
            ms(remote.sendCpuMs)
          } + ` +
          `serve CPU ` +
          `${ms(remote.serveCpuMs)} ms per row`,
        at: now,
        parts: {
          exposedMs: remote.exposedMs,
          sendCpuMs: remote.sendCpuMs,
          serveCpuMs: remote.serveCpuMs,
        },
      };
    }
    const expert = expertRowCost(busyMs, rows);
    this.#fresh.expert = expert !== null;
    if (expert !== null) {
      this.#lastExpert = {
        ms: expert.ms,
        source: "measured",
        detail: `measured over ${Math.round(expert.rows)} expert rows in the last ${seconds} s: ` +
          "device-busy ms ÷ routed-expert rows (gates and fixed costs included)",
        at: now,
      };
    }
  }
}

/** An older measurement, its detail saying how old and why no newer one. */
function aged<T extends CostEstimate>(estimate: T, now: number, since: string): T {
  if (estimate.at === null) return estimate;
  const age = Math.round((now - estimate.at) / 1000);
  return { ...estimate, detail: `${estimate.detail} (${age} s ago; ${since})` };
}

function ms(value: number): string {
  return value < 0.01 ? value.toExponential(1) : value.toFixed(3);
}
