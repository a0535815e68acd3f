/**
 * @module The dashboard's recent history, in memory: per (model, layer) the expert
 * tokens/s over the last minutes, and the balancedness trend.
 *
 * Design: the collector's round hands every {@linkcode PoolLoad} (about 1 s apart) to
 * `record()`. Expert vectors are folded into fixed columns (`columnMs`, default 10 s;
 * `columns`, default 60 → 10 minutes) holding a sum and a sample count per layer, so a
 * column's value is the mean rate over the rounds that saw that layer. A column where a
 * layer had no fresh report has no value for it (`null`): no data is never shown as zero
 * load. The balancedness trend keeps every round (ring of `trendPoints`, default 600).
 * Both rings are bounded, whatever the traffic; memory is columns × layers × experts.
 */
import type { PoolLoad } from "../../control/load/pool_load.ts";

/** Options of {@linkcode LoadTimeline}. */
export interface LoadTimelineOptions {
  /** Width of one column (ms); default 10 000. */
  columnMs?: number;
  /** Columns kept; default 60 (10 minutes at 10 s). */
  columns?: number;
  /** Balancedness points kept (one per round); default 600. */
  trendPoints?: number;
}

/** One column of a layer's timeline, as the dashboard API serves it. */
export interface TimelineColumn {
  /** Column start (ms since the Unix epoch), a multiple of `column_ms`. */
  start: number;
  /** Rounds that saw this layer in the column; 0 means no data. */
  samples: number;
  /** `[expert]` → mean tokens/s over those rounds; `null` without samples. */
  expert_tokens_s: number[] | null;
}

/** A layer's recent expert load, oldest column first. */
export interface LayerTimeline {
  model: string;
  layer: number;
  column_ms: number;
  columns: TimelineColumn[];
}

/** One round's spread measures (all in [0, 1]; `null` when nothing reported). */
export interface BalanceTrendPoint {
  at: number;
  /** Pool balancedness (across backends, `control/load/backend_balance.ts`). */
  pool: number | null;
  /** The worst layer's balancedness. */
  worst: number | null;
  /** Expert skew: mean over every model's layers of the top-10 % share. */
  skew: number | null;
}

interface Column {
  start: number;
  /** `model` → `layer` → running sums and the rounds that contributed. */
  layers: Map<string, Map<number, { sums: number[]; samples: number }>>;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Bounded in-memory expert-load and balancedness history; see the module doc. */
export class LoadTimeline {
  readonly columnMs: number;
  readonly maxColumns: number;
  readonly maxTrendPoints: number;
  readonly #columns: Column[] = [];
  readonly #trend: BalanceTrendPoint[] = [];

  constructor(options: LoadTimelineOptions = {}) {
    this.columnMs = options.columnMs ?? 10_000;
    this.maxColumns = options.columns ?? 60;
    this.maxTrendPoints = options.trendPoints ?? 600;
    for (const [name, value] of Object.entries(this.#sizes())) {
      if (!Number.isInteger(value) || value < 1) {
        throw new RangeError(`Cannot create timeline: ${name} must be a positive integer`);
      }
    }
  }

  #sizes() {
    return { columnMs: this.columnMs, columns: this.maxColumns, trendPoints: this.maxTrendPoints };
  }

  /** Folds one round's aggregate into the current column and the trend. */
  record(load: PoolLoad): void {
    // Step 1: the column of `load.at` (a clock step back folds into the newest column).
    const start = Math.floor(load.at / this.columnMs) * this.columnMs;
    let column = this.#columns.at(-1);
    if (column === undefined || start > column.start) {
      column = { start, layers: new Map() };
      this.#columns.push(column);
      if (this.#columns.length > this.maxColumns) this.#columns.shift();
    }
    // Step 2: add each layer's vector to its sums.
    const layerSkew: number[] = [];
    for (const { model, layers } of load.models) {
      let byLayer = column.layers.get(model);
      if (byLayer === undefined) column.layers.set(model, byLayer = new Map());
      for (const layer of layers) {
        layerSkew.push(layer.expertSkew.top10Share);
        let cell = byLayer.get(layer.layer);
        if (cell === undefined) byLayer.set(layer.layer, cell = { sums: [], samples: 0 });
        layer.expertTokensPerS.forEach((rate, expert) => {
          cell.sums[expert] = (cell.sums[expert] ?? 0) + rate;
        });
        cell.samples++;
      }
    }
    // Step 3: the trend point (no routed-expert load: no balancedness, not 1).
    const reporting = load.pool.reporting > 0 &&
      load.models.some((m) => m.layers.some((l) => l.expertTokensPerS.some((r) => r > 0)));
    this.#trend.push({
      at: load.at,
      pool: reporting ? round(load.pool.balancedness) : null,
      worst: reporting && load.pool.worstLayer ? round(load.pool.worstLayer.balancedness) : null,
      skew: layerSkew.length === 0
        ? null
        : round(layerSkew.reduce((sum, value) => sum + value, 0) / layerSkew.length),
    });
    if (this.#trend.length > this.maxTrendPoints) this.#trend.shift();
  }

  /** The recent columns of one layer, oldest first (every kept column, with or without data). */
  layer(model: string, layer: number): LayerTimeline {
    return {
      model,
      layer,
      column_ms: this.columnMs,
      columns: this.#columns.map((column) => {
        const cell = column.layers.get(model)?.get(layer);
        if (cell === undefined || cell.samples === 0) {
          return { start: column.start, samples: 0, expert_tokens_s: null };
        }
        // Experts absent from a round contributed 0 to it (sparse vectors end early).
        const rates = Array.from(cell.sums, (sum) => round((sum ?? 0) / cell.samples));
        return { start: column.start, samples: cell.samples, expert_tokens_s: rates };
      }),
    };
  }

  /** Every kept balancedness point, oldest first. */
  trend(): readonly BalanceTrendPoint[] {
    return this.#trend;
  }
}
