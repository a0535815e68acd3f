/**
 * @module The AST of Switchyard's LogQL subset, and the error a query outside it raises.
 *
 * A query is a stream selector followed by pipeline stages, run left to right:
 *
 * ```
 * {service="router", level=~"warn|error"} |= "request" | json | status >= 500 | line_format "{{.msg}}"
 * └──────────── selector ────────────────┘ └ line ─────┘ └json┘ └ label filter ┘ └──── line_format ───┘
 * ```
 *
 * The AST is plain data (strings, numbers); the evaluator compiles regexes once.
 */

/** Label matcher operator, as in Prometheus: equal, not equal, regex match, regex no-match. */
export type MatchOp = "=" | "!=" | "=~" | "!~";

/** `name <op> "value"`; regexes are fully anchored like Loki's. */
export interface LabelMatcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** Line filter operator: contains, does not contain, regex search, regex no-match. */
export type LineFilterOp = "|=" | "!=" | "|~" | "!~";

/**
 * `|= "a"` or `|= "a" or "b"`: `values` are alternatives. A negative filter keeps lines
 * matching none of them (Loki's `!= "a" or "b"`).
 */
export interface LineFilter {
  op: LineFilterOp;
  values: string[];
}

/** Numeric comparison of a label filter. */
export type NumberOp = ">" | ">=" | "<" | "<=" | "==" | "!=";

/** A label filter: a string matcher, a numeric comparison, or `and` / `or` of two. */
export type LabelFilter =
  | { kind: "match"; matcher: LabelMatcher }
  | { kind: "number"; name: string; op: NumberOp; value: number }
  | { kind: "and" | "or"; left: LabelFilter; right: LabelFilter };

/** One part of a `line_format` template: literal text or a `{{.label}}` substitution. */
export type TemplatePart = { text: string } | { label: string };

/** One pipeline stage. */
export type Stage =
  | { kind: "line_filter"; filter: LineFilter }
  | { kind: "json" }
  | { kind: "label_filter"; filter: LabelFilter }
  | { kind: "line_format"; template: TemplatePart[] };

/** A parsed log query of the subset. */
export interface LogQuery {
  selector: LabelMatcher[];
  pipeline: Stage[];
}

/**
 * A query that cannot be evaluated: `syntax` (it is not LogQL; `position` is the 0-based
 * offset) or `unsupported` (valid LogQL outside the subset; the message names the construct).
 */
export class LogQLError extends Error {
  readonly kind: "syntax" | "unsupported";
  readonly position: number;

  constructor(kind: "syntax" | "unsupported", message: string, position: number) {
    super(message);
    this.name = "LogQLError";
    this.kind = kind;
    this.position = position;
  }
}

/** A range aggregation of the subset (Loki's names). */
export type RangeOp =
  | "count_over_time"
  | "rate"
  | "bytes_over_time"
  | "bytes_rate"
  | "sum_over_time"
  | "avg_over_time"
  | "min_over_time"
  | "max_over_time"
  | "quantile_over_time";

/** A vector aggregation of the subset. */
export type VectorOp = "sum" | "avg" | "max" | "min" | "count" | "topk";

/** `by (a, b)` keeps only those labels; `without (a, b)` drops them. */
export interface Grouping {
  without: boolean;
  labels: string[];
}

/**
 * `op([param,] {selector} | pipeline [| unwrap label [| post filters]] [range]) [by (…)]`.
 * `unwrap` takes a sample's value from a label (the label leaves the series' labels);
 * without it a sample is 1 per line (`count_over_time`, `rate`) or the line's bytes.
 */
export interface RangeAggregation {
  kind: "range";
  op: RangeOp;
  /** The quantile of `quantile_over_time`. */
  param?: number;
  log: LogQuery;
  unwrap?: { label: string; postFilters: LabelFilter[] };
  rangeMs: number;
  grouping?: Grouping;
}

/** `op [by|without (…)] ([k,] inner)`. */
export interface VectorAggregation {
  kind: "vector";
  op: VectorOp;
  /** `k` of `topk`. */
  param?: number;
  grouping?: Grouping;
  inner: MetricQuery;
}

/** A metric query of the subset. */
export type MetricQuery = RangeAggregation | VectorAggregation;

/** Any query of the subset: a log query (streams) or a metric query (matrix). */
export type ParsedQuery =
  | { kind: "log"; log: LogQuery }
  | { kind: "metric"; metric: MetricQuery };
