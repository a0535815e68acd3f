/**
 * @module Evaluates a metric query of the subset over log lines, with Loki's semantics:
 *
 * - Samples: each line that passes the log pipeline is one sample of the series named by
 *   its labels (after the pipeline); its value is 1 (`count_over_time`, `rate`), the
 *   line's UTF-8 bytes after the pipeline (`bytes_*`), or the unwrapped label's number
 *   (the label leaves the series' labels; a missing or non-numeric value sets
 *   `__error__="SampleExtractionErr"`; label filters after the unwrap run next).
 *   A sample still carrying `__error__` fails the query, as in Loki ("pipeline error").
 * - Steps: `start, start + step, …` up to and including `end`; at step `t` the range
 *   aggregation sees the samples in `(t - range, t]`; a series with none has no point
 *   there. `rate` = count (or sum of unwrapped values) ÷ range seconds; `bytes_rate` =
 *   bytes ÷ range seconds; `quantile_over_time` interpolates like Prometheus.
 * - Vector aggregations group by the `by` labels (or all but the `without` ones) per step;
 *   `topk` keeps the k largest series per group with their own labels.
 * - Series are sorted like Prometheus' `labels.Compare`; timestamps are in ms precision.
 *
 * Pure: the caller feeds lines ({@linkcode SampleCollector.add}) and gets the matrix.
 */
import type { Grouping, MetricQuery, RangeAggregation, VectorAggregation } from "./logql_ast.ts";
import { type CompiledQuery, compileLabelFilter, compileQuery } from "./log_pipeline.ts";
import {
  compareLabels,
  formatSampleValue,
  type MatrixResponse,
  type MatrixSeries,
} from "./matrix_result.ts";
import { labelsKey } from "./streams_result.ts";

/** The evaluation points of a metric query: `[start, end]` every `step`. */
export interface MetricRange {
  startNs: bigint;
  endNs: bigint;
  stepNs: bigint;
}

/** Loki's default limit on the series of one answer (`max_query_series`). */
export const MAX_SERIES = 500;
/** Most samples one query may hold; beyond, narrow the range or the selector. */
export const MAX_SAMPLES = 2_000_000;

/** A query Loki would refuse while evaluating it (a pipeline error, a limit): a 400. */
export class MetricQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MetricQueryError";
  }
}

interface Sample {
  ns: bigint;
  value: number;
}

interface Series {
  labels: Record<string, string>;
  samples: Sample[];
}

/** The range aggregation at the bottom of a metric query (there is exactly one). */
export function leafRange(query: MetricQuery): RangeAggregation {
  return query.kind === "range" ? query : leafRange(query.inner);
}

/** Collects the samples of a metric query's range aggregation, line by line. */
export class SampleCollector {
  readonly #leaf: RangeAggregation;
  readonly #log: CompiledQuery;
  readonly #post: ((labels: Record<string, string>) => boolean)[];
  readonly #series = new Map<string, Series>();
  readonly #fromNs: bigint;
  readonly #toNs: bigint;
  #count = 0;

  constructor(query: MetricQuery, range: MetricRange) {
    this.#leaf = leafRange(query);
    this.#log = compileQuery(this.#leaf.log);
    this.#post = (this.#leaf.unwrap?.postFilters ?? []).map(compileLabelFilter);
    this.#toNs = range.endNs;
    this.#fromNs = range.startNs - BigInt(this.#leaf.rangeMs) * 1_000_000n;
  }

  /** Lines at `ns` in `(from, to]` can count: a reader skips the others unread. */
  get fromNs(): bigint {
    return this.#fromNs;
  }
  get toNs(): bigint {
    return this.#toNs;
  }
  /** The log query's compiled form (stream selection and cheap line tests). */
  get log(): CompiledQuery {
    return this.#log;
  }

  /** Offers one line of a stream; `parsed` may carry `JSON.parse(line)`. */
  add(
    ns: bigint,
    line: string,
    stream: Readonly<Record<string, string>>,
    parsed?: { value: unknown },
  ): void {
    if (ns <= this.#fromNs || ns > this.#toNs) return;
    if (!this.#log.matchesStream(stream)) return;
    const entry = this.#log.process(line, stream, parsed);
    if (!entry) return;
    const labels = entry.labels;
    const leaf = this.#leaf;
    let value = 1;
    if (leaf.op === "bytes_over_time" || leaf.op === "bytes_rate") {
      value = new TextEncoder().encode(entry.line).length;
    } else if (leaf.unwrap) {
      const text = labels[leaf.unwrap.label] ?? "";
      value = parseGoFloat(text);
      if (Number.isNaN(value) && !/^[+-]?nan$/i.test(text)) {
        labels["__error__"] = "SampleExtractionErr";
      }
      for (const filter of this.#post) if (!filter(labels)) return;
      for (const name of Object.keys(labels)) if (labels[name] === "") delete labels[name];
    }
    let series = labels;
    if (labels["__error__"] === undefined) {
      if (leaf.unwrap) delete series[leaf.unwrap.label];
      if (leaf.grouping) series = group(series, leaf.grouping, leaf.unwrap?.label);
    } else {
      throw new MetricQueryError(
        `pipeline error: '${labels["__error__"]}' for series: '${labelsKey(labels)}'. ` +
          `Use a label filter to intentionally skip this error. ` +
          `(e.g | __error__!="${labels["__error__"]}"). To skip all potential errors you can ` +
          `match empty errors.(e.g __error__="") The label filter can also be specified after ` +
          `unwrap. (e.g | unwrap latency | __error__="" )`,
      );
    }
    if (++this.#count > MAX_SAMPLES) {
      throw new MetricQueryError(
        `the query reads more than ${MAX_SAMPLES} samples: narrow the range or the selector`,
      );
    }
    const key = labelsKey(series);
    let found = this.#series.get(key);
    if (!found) this.#series.set(key, found = { labels: series, samples: [] });
    found.samples.push({ ns, value });
  }

  /** The range aggregation's points per series at every step of `range`. */
  points(range: MetricRange): PointSeries[] {
    return evaluate(this.#series, range, this.#leaf);
  }
}

/** Evaluates `query` over the samples `collector` holds, at every step of `range`. */
export function evaluateMetric(
  query: MetricQuery,
  collector: SampleCollector,
  range: MetricRange,
  warnings: string[] = [],
): MatrixResponse {
  let result = collector.points(range);
  if (query.kind === "vector") {
    const steps = new Map<number, Vector>();
    for (const series of result) {
      for (const [t, value] of series.points) {
        const vector = steps.get(t) ?? [];
        vector.push({ labels: series.labels, value });
        steps.set(t, vector);
      }
    }
    const out = new Map<string, PointSeries>();
    for (const [t, vector] of [...steps.entries()].sort(([a], [b]) => a - b)) {
      for (const sample of applyVector(query, vector)) {
        const key = labelsKey(sample.labels);
        let series = out.get(key);
        if (!series) out.set(key, series = { labels: sample.labels, points: [] });
        series.points.push([t, sample.value]);
      }
    }
    result = [...out.values()];
  }
  if (result.length > MAX_SERIES) {
    throw new MetricQueryError(
      `maximum of series (${MAX_SERIES}) reached for a single query: aggregate with ` +
        "sum by (…) or narrow the selector",
    );
  }
  const matrix: MatrixSeries[] = result.sort((a, b) => compareLabels(a.labels, b.labels))
    .map((s) => ({
      metric: s.labels,
      values: s.points.map(([t, v]) => [t, formatSampleValue(v)] as [number, string]),
    }));
  return {
    status: "success",
    data: { resultType: "matrix", result: matrix },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** A series' points: `[unix seconds, value]`. */
interface PointSeries {
  labels: Record<string, string>;
  points: [number, number][];
}

interface VectorSample {
  labels: Record<string, string>;
  value: number;
}
type Vector = VectorSample[];

/** Applies the vector aggregations above the leaf, innermost first. */
function applyVector(query: MetricQuery, vector: Vector): Vector {
  if (query.kind === "range") return vector;
  return aggregate(query, applyVector(query.inner, vector));
}

function aggregate(query: VectorAggregation, vector: Vector): Vector {
  const groups = new Map<string, { labels: Record<string, string>; members: VectorSample[] }>();
  for (const sample of vector) {
    const labels = query.grouping ? group(sample.labels, query.grouping) : {};
    const key = labelsKey(labels);
    let found = groups.get(key);
    if (!found) groups.set(key, found = { labels, members: [] });
    found.members.push(sample);
  }
  const out: Vector = [];
  for (const { labels, members } of groups.values()) {
    const values = members.map((m) => m.value);
    switch (query.op) {
      case "sum":
        out.push({ labels, value: values.reduce((a, b) => a + b, 0) });
        break;
      case "avg":
        out.push({ labels, value: values.reduce((a, b) => a + b, 0) / values.length });
        break;
      case "max":
        out.push({ labels, value: Math.max(...values) });
        break;
      case "min":
        out.push({ labels, value: Math.min(...values) });
        break;
      case "count":
        out.push({ labels, value: values.length });
        break;
      case "topk": {
        const sorted = [...members].sort((a, b) =>
          b.value - a.value || compareLabels(a.labels, b.labels)
        );
        out.push(...sorted.slice(0, query.param ?? 1));
        break;
      }
    }
  }
  return out;
}

/** `by` keeps the listed labels that are set; `without` drops them (and `extra`). */
function group(
  labels: Readonly<Record<string, string>>,
  grouping: Grouping,
  extra?: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (grouping.without) {
    const drop = new Set([...grouping.labels, ...(extra ? [extra] : [])]);
    for (const [name, value] of Object.entries(labels)) if (!drop.has(name)) out[name] = value;
  } else {
    for (const name of grouping.labels) {
      const value = labels[name];
      if (value !== undefined && value !== "") out[name] = value;
    }
  }
  return out;
}

/** The range aggregation at every step: `(t - range, t]`. */
function evaluate(
  seriesMap: Map<string, Series>,
  range: MetricRange,
  leaf: RangeAggregation,
): PointSeries[] {
  const rangeNs = BigInt(leaf.rangeMs) * 1_000_000n;
  const seconds = leaf.rangeMs / 1000;
  const out: PointSeries[] = [];
  for (const { labels, samples } of seriesMap.values()) {
    samples.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
    const points: [number, number][] = [];
    let lo = 0;
    let hi = 0;
    for (let t = range.startNs; t <= range.endNs; t += range.stepNs) {
      while (hi < samples.length && samples[hi]!.ns <= t) hi++;
      while (lo < hi && samples[lo]!.ns <= t - rangeNs) lo++;
      if (lo >= hi) continue;
      const window = samples.slice(lo, hi).map((s) => s.value);
      points.push([Number(t / 1_000_000n) / 1000, rangeValue(leaf, window, seconds)]);
    }
    if (points.length > 0) out.push({ labels, points });
  }
  return out;
}

function rangeValue(leaf: RangeAggregation, window: number[], seconds: number): number {
  const sum = () => window.reduce((a, b) => a + b, 0);
  switch (leaf.op) {
    case "count_over_time":
      return window.length;
    case "rate":
      return leaf.unwrap ? sum() / seconds : window.length / seconds;
    case "bytes_over_time":
    case "sum_over_time":
      return sum();
    case "bytes_rate":
      return sum() / seconds;
    case "avg_over_time":
      return sum() / window.length;
    case "min_over_time":
      return Math.min(...window);
    case "max_over_time":
      return Math.max(...window);
    case "quantile_over_time":
      return quantile(leaf.param ?? 0.5, window);
  }
}

/** Prometheus' quantile: linear interpolation between the closest ranks. */
export function quantile(q: number, values: number[]): number {
  if (values.length === 0) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = q * (sorted.length - 1);
  const lower = Math.max(0, Math.floor(rank));
  const upper = Math.min(sorted.length - 1, lower + 1);
  const weight = rank - Math.floor(rank);
  return sorted[lower]! * (1 - weight) + sorted[upper]! * weight;
}

/** Go's `strconv.ParseFloat` for decimal text: NaN when it is not a number. */
export function parseGoFloat(text: string): number {
  if (/^[+-]?(inf|infinity)$/i.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return NaN;
  return Number(text);
}
