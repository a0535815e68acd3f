/**
 * @module Parses any query of Switchyard's LogQL subset: a log query (see
 * `logql_parser.ts`) or a metric query over one:
 *
 * - range aggregations `count_over_time`, `rate`, `bytes_over_time`, `bytes_rate` over a
 *   log query, and `sum_over_time`, `avg_over_time`, `min_over_time`, `max_over_time`,
 *   `quantile_over_time(φ, …)` (and `rate`) over `| unwrap <label>` (label filters may
 *   follow the unwrap, e.g. `| __error__=""`), with `by`/`without` on unwrapped ones;
 * - vector aggregations `sum`, `avg`, `max`, `min`, `count` (`by`/`without`) and
 *   `topk(k, …)`, nested freely.
 *
 * Anything else (binary operations, `offset`, other functions, unwrap conversions) is a
 * {@linkcode LogQLError} naming the construct, as Loki would name a syntax error.
 */
import {
  type Grouping,
  type LabelFilter,
  LogQLError,
  type MetricQuery,
  type ParsedQuery,
  type RangeOp,
  type VectorOp,
} from "./logql_ast.ts";
import {
  childList,
  logQueryOf,
  parseTree,
  syntaxError,
  type SyntaxNode,
  TreeWalker,
} from "./logql_parser.ts";
import { parseDurationMs } from "./query_range_params.ts";

const RANGE_OPS: Record<string, RangeOp> = {
  CountOverTime: "count_over_time",
  Rate: "rate",
  BytesOverTime: "bytes_over_time",
  BytesRate: "bytes_rate",
  SumOverTime: "sum_over_time",
  AvgOverTime: "avg_over_time",
  MinOverTime: "min_over_time",
  MaxOverTime: "max_over_time",
  QuantileOverTime: "quantile_over_time",
};
const VECTOR_OPS: Record<string, VectorOp> = {
  Sum: "sum",
  Avg: "avg",
  Max: "max",
  Min: "min",
  Count: "count",
  Topk: "topk",
};
/** Range aggregations that read a value from `| unwrap`, and those that never do. */
const NEEDS_UNWRAP = new Set<RangeOp>([
  "sum_over_time",
  "avg_over_time",
  "min_over_time",
  "max_over_time",
  "quantile_over_time",
]);
const NO_UNWRAP = new Set<RangeOp>(["count_over_time", "bytes_over_time", "bytes_rate"]);

/** Parses a log or metric query; throws {@linkcode LogQLError} outside the subset. */
export function parseQuery(query: string): ParsedQuery {
  const tree = parseTree(query);
  let expr = tree.topNode.getChild("Expr");
  const metric = expr?.getChild("MetricExpr");
  if (metric) return { kind: "metric", metric: new MetricWalker(query).metric(metric) };
  expr = expr?.getChild("LogExpr") ?? null;
  return { kind: "log", log: logQueryOf(query, expr) };
}

class MetricWalker {
  readonly #query: string;
  readonly #walker: TreeWalker;

  constructor(query: string) {
    this.#query = query;
    this.#walker = new TreeWalker(query);
  }

  metric(node: SyntaxNode): MetricQuery {
    const body = childList(node).find((child) =>
      child.name === "RangeAggregationExpr" || child.name === "VectorAggregationExpr" ||
      child.name === "MetricExpr"
    );
    if (body?.name === "MetricExpr") return this.metric(body); // parenthesised
    if (body?.name === "RangeAggregationExpr") return this.#range(body);
    if (body?.name === "VectorAggregationExpr") return this.#vector(body);
    throw this.#unsupported(node, `metric expression "${this.#text(node)}"`);
  }

  #range(node: SyntaxNode): MetricQuery {
    const opNode = node.getChild("RangeOp")!.firstChild!;
    const op = RANGE_OPS[opNode.name];
    if (!op) throw this.#unsupported(opNode, `range aggregation "${this.#text(opNode)}"`);
    const rangeNode = node.getChild("LogRangeExpr")!;
    const unwrapNode = rangeNode.getChild("UnwrapExpr");
    const unwrap = unwrapNode ? this.#unwrap(unwrapNode) : undefined;
    if (NEEDS_UNWRAP.has(op) && !unwrap) {
      throw this.#unsupported(
        node,
        `${op} without "| unwrap <label>" (it aggregates values, e.g. ${op}(… | unwrap ms [1m]))`,
      );
    }
    if (NO_UNWRAP.has(op) && unwrap) {
      throw this.#unsupported(unwrapNode!, `"| unwrap" in ${op} (it counts lines or bytes)`);
    }
    const grouping = this.#grouping(node.getChild("Grouping"));
    if (grouping && !unwrap) {
      throw this.#unsupported(
        node.getChild("Grouping")!,
        `grouping in ${op} (only unwrapped range aggregations take by/without; ` +
          "wrap it in sum by (…) instead)",
      );
    }
    const durationNode = rangeNode.getChild("Range")?.getChild("Duration");
    if (!durationNode) throw syntaxError(this.#query, rangeNode.to, "expected a range like [5m]");
    let rangeMs: number;
    try {
      rangeMs = parseDurationMs(this.#text(durationNode));
    } catch (error) {
      throw syntaxError(this.#query, durationNode.from, (error as Error).message);
    }
    const param = node.getChild("Number");
    const quantile = param ? Number(this.#text(param)) : undefined;
    if (op === "quantile_over_time" && (quantile === undefined || !Number.isFinite(quantile))) {
      throw syntaxError(this.#query, node.from, "quantile_over_time needs a quantile, e.g. 0.99");
    }
    // The selector and pipeline: the range expression minus its unwrap and range parts.
    const log = logQueryOf(this.#query, rangeNode);
    return {
      kind: "range",
      op,
      ...(quantile !== undefined && op === "quantile_over_time" ? { param: quantile } : {}),
      log,
      ...(unwrap ? { unwrap } : {}),
      rangeMs,
      ...(grouping ? { grouping } : {}),
    };
  }

  /** `| unwrap label [| post filters]`: lezer nests the filters around the unwrap. */
  #unwrap(node: SyntaxNode): { label: string; postFilters: LabelFilter[] } {
    const inner = node.getChild("UnwrapExpr");
    if (inner) {
      const base = this.#unwrap(inner);
      const filter = node.getChild("LabelFilter");
      if (filter) base.postFilters.push(this.#walker.labelFilter(filter));
      return base;
    }
    const label = node.getChild("Identifier");
    if (!label) throw syntaxError(this.#query, node.from, "unwrap needs a label name");
    return { label: this.#text(label), postFilters: [] };
  }

  #vector(node: SyntaxNode): MetricQuery {
    const opNode = node.getChild("VectorOp")!.firstChild!;
    const op = VECTOR_OPS[opNode.name];
    if (!op) throw this.#unsupported(opNode, `vector aggregation "${this.#text(opNode)}"`);
    const inner = node.getChild("MetricExpr");
    if (!inner) throw syntaxError(this.#query, node.from, "expected a metric expression");
    const number = node.getChild("Number");
    let param: number | undefined;
    if (op === "topk") {
      param = number ? Number(this.#text(number)) : NaN;
      if (!Number.isInteger(param) || param < 1) {
        throw syntaxError(
          this.#query,
          node.from,
          "topk needs a positive integer k, e.g. topk(5, …)",
        );
      }
    } else if (number) {
      throw syntaxError(this.#query, number.from, `${op} takes no parameter`);
    }
    const grouping = this.#grouping(node.getChild("Grouping"));
    return {
      kind: "vector",
      op,
      ...(param !== undefined ? { param } : {}),
      ...(grouping ? { grouping } : {}),
      inner: this.metric(inner),
    };
  }

  #grouping(node: SyntaxNode | null): Grouping | undefined {
    if (!node) return undefined;
    const labels = node.getChild("Labels");
    return {
      without: node.getChild("Without") !== null,
      labels: labels ? labels.getChildren("Identifier").map((id) => this.#text(id)) : [],
    };
  }

  #unsupported(node: SyntaxNode, what: string): LogQLError {
    return new LogQLError(
      "unsupported",
      `Unsupported LogQL: ${what} is not in the supported subset`,
      node.from,
    );
  }

  #text(node: SyntaxNode): string {
    return this.#query.slice(node.from, node.to);
  }
}
