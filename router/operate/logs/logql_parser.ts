/**
 * @module Parses Switchyard's LogQL subset with Grafana's own grammar
 * (`@grafana/lezer-logql`) into the small AST of `logql_ast.ts`.
 *
 * Design: lezer builds an error-tolerant concrete tree. We walk it once in document
 * order and stop at the first node that is either an error (→ syntax error with its
 * line and column) or a construct outside the subset (→ "Unsupported LogQL: …" naming
 * it), whichever comes first. Only a clean, supported tree is converted to the AST.
 *
 * The subset: a stream selector (`= != =~ !~`), line filters (`|= != |~ !~`, with
 * `or` alternatives), `| json` (no arguments), label filters (string matchers, numeric
 * `> >= < <= == !=`, `and`, `or`, `,`, parentheses) and `| line_format "{{.label}}"`.
 * Metric queries over such log queries are read by `logql_query.ts`; this file's
 * {@linkcode parseLogQL} takes log queries only.
 */
import { parser } from "@grafana/lezer-logql";
import {
  type LabelFilter,
  type LabelMatcher,
  type LineFilterOp,
  LogQLError,
  type LogQuery,
  type MatchOp,
  type NumberOp,
  type Stage,
} from "./logql_ast.ts";
import { compileRegex, unquoteLogQL } from "./logql_strings.ts";
import { parseLineTemplate, TemplateActionError } from "./line_template.ts";

export type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];

const SUBSET = "is not in the supported subset";
const parserMessage = (name: string) => `"${name}" parser ${SUBSET} (json only)`;

/** Node name → message naming the unsupported construct (`text` is the node's source). */
const UNSUPPORTED: Record<string, (text: string) => string> = {
  Logfmt: () => parserMessage("logfmt"),
  Unpack: () => parserMessage("unpack"),
  Pattern: () => parserMessage("pattern"),
  Regexp: () => parserMessage("regexp"),
  JsonExpressionParser: (text) =>
    `"json" with extraction expressions ("${text}") ${SUBSET} (plain "| json" only)`,
  LabelFormatExpr: () => `"label_format" ${SUBSET}`,
  DropLabelsExpr: () => `"drop" ${SUBSET}`,
  KeepLabelsExpr: () => `"keep" ${SUBSET}`,
  DecolorizeExpr: () => `"decolorize" ${SUBSET}`,
  PipePattern: () => `pattern line filter "|>" ${SUBSET}`,
  Npa: () => `pattern line filter "!>" ${SUBSET}`,
  FilterOp: (text) => `"${text}()" line filter ${SUBSET}`,
  IpLabelFilter: () => `"ip()" label filter ${SUBSET}`,
  DurationFilter: (text) => `duration label filter "${text}" ${SUBSET} (numbers only)`,
  BytesFilter: (text) => `bytes label filter "${text}" ${SUBSET} (numbers only)`,
  OffsetExpr: () => `"offset" ${SUBSET}`,
  BinOpExpr: (text) => `binary operation "${text.trim().slice(0, 60)}" ${SUBSET}`,
  LabelReplaceExpr: () => `"label_replace" ${SUBSET}`,
  VectorExpr: () => `"vector()" ${SUBSET}`,
  LabelAggregationExpr: (text) => `"${text.split("(")[0]!.trim()}" ${SUBSET}`,
  ConvOp: (text) => `unwrap conversion "${text}()" ${SUBSET} (plain "| unwrap label" only)`,
  RateCounter: () => rangeMessage("rate_counter"),
  StddevOverTime: () => rangeMessage("stddev_over_time"),
  StdvarOverTime: () => rangeMessage("stdvar_over_time"),
  FirstOverTime: () => rangeMessage("first_over_time"),
  LastOverTime: () => rangeMessage("last_over_time"),
  AbsentOverTime: () => rangeMessage("absent_over_time"),
  Stddev: () => vectorMessage("stddev"),
  Stdvar: () => vectorMessage("stdvar"),
  Bottomk: () => vectorMessage("bottomk"),
  Sort: () => vectorMessage("sort"),
  Sort_Desc: () => vectorMessage("sort_desc"),
  Approx_Topk: () => vectorMessage("approx_topk"),
};

/** Keywords that lezer reads as an error node when misplaced (`| unwrap x` in a log query). */
const MISPLACED: Record<string, (text: string) => string> = {
  Unwrap: () =>
    `"unwrap" outside a range aggregation ${SUBSET} (e.g. avg_over_time(… | unwrap ms [1m]))`,
  Offset: () => `"offset" ${SUBSET}`,
};

function rangeMessage(name: string): string {
  return `range aggregation "${name}" ${SUBSET} (count_over_time, rate, bytes_over_time, ` +
    "bytes_rate, sum_over_time, avg_over_time, min_over_time, max_over_time, quantile_over_time)";
}

function vectorMessage(name: string): string {
  return `vector aggregation "${name}" ${SUBSET} (sum, avg, max, min, count, topk)`;
}

const MATCH_OPS: Record<string, MatchOp> = { Eq: "=", Neq: "!=", Re: "=~", Nre: "!~" };
const LINE_OPS: Record<string, LineFilterOp> = {
  PipeExact: "|=",
  Neq: "!=",
  PipeMatch: "|~",
  Nre: "!~",
};
const NUMBER_OPS: Record<string, NumberOp> = {
  Gtr: ">",
  Gte: ">=",
  Lss: "<",
  Lte: "<=",
  Eql: "==",
  Eq: "==",
  Neq: "!=",
};

/** Parses `query`; throws {@linkcode LogQLError} (syntax or unsupported) otherwise. */
export function parseLogQL(query: string): LogQuery {
  const tree = parseTree(query);
  const metric = tree.topNode.getChild("Expr")?.getChild("MetricExpr");
  if (metric) {
    throw new LogQLError(
      "unsupported",
      `Unsupported LogQL: metric query ${describeMetric(query.slice(metric.from, metric.to))} ` +
        "where a log query is expected (a stream selector and a pipeline)",
      metric.from,
    );
  }
  return logQueryOf(query, tree.topNode.getChild("Expr")?.getChild("LogExpr") ?? null);
}

/** Parses `query` with lezer and throws for the first error or unsupported construct. */
export function parseTree(query: string): ReturnType<typeof parser.parse> {
  if (query.trim() === "") throw syntaxError(query, 0, "the query is empty");
  const tree = parser.parse(query);
  rejectInvalid(query, tree);
  return tree;
}

/** The log query under a `LogExpr` (or a `LogRangeExpr`) node. */
export function logQueryOf(query: string, node: SyntaxNode | null): LogQuery {
  const walker = new TreeWalker(query);
  let logExpr = node;
  while (logExpr !== null && logExpr.getChild("Selector") === null) {
    logExpr = logExpr.getChild("LogExpr"); // parenthesised `({…})`
  }
  if (logExpr === null) throw syntaxError(query, 0, "expected a stream selector");
  const selectorNode = logExpr.getChild("Selector")!;
  const selector = descendants(selectorNode, "Matcher").map((m) => walker.matcher(m));
  requireNonEmptyMatcher(query, selectorNode, selector);
  const pipelineNode = logExpr.getChild("PipelineExpr");
  return { selector, pipeline: pipelineNode ? walker.pipeline(pipelineNode) : [] };
}

/** Throws for the first error or unsupported node, whichever comes first in the text. */
function rejectInvalid(query: string, tree: ReturnType<typeof parser.parse>): void {
  const textOf = (node: { from: number; to: number }) => query.slice(node.from, node.to);
  let error: { from: number; to: number } | undefined;
  let unsupported: { from: number; message: string } | undefined;
  tree.iterate({
    enter(ref) {
      if (error || unsupported) return false;
      if (ref.type.isError) {
        // `| unwrap x` and `offset 5m` parse as errors wrapping their keyword.
        const keyword = ref.node.firstChild;
        const describe = keyword && (MISPLACED[keyword.name] ?? UNSUPPORTED[keyword.name]);
        if (describe) unsupported = { from: ref.from, message: describe(textOf(keyword)) };
        else error = { from: ref.from, to: ref.to };
        return false;
      }
      const describe = UNSUPPORTED[ref.name];
      // A construct with an error inside (`x > ` read as a duration filter) is a syntax error.
      if (describe && !containsError(ref.node)) {
        unsupported = { from: ref.from, message: describe(textOf(ref)) };
        return false;
      }
      return undefined;
    },
  });
  if (unsupported && (!error || unsupported.from <= error.from)) {
    throw new LogQLError(
      "unsupported",
      `Unsupported LogQL: ${unsupported.message}`,
      unsupported.from,
    );
  }
  if (error) {
    const token = query.slice(error.from, Math.max(error.to, error.from)) ||
      (/^\S+/.exec(query.slice(error.from))?.[0] ?? "");
    const what = token === ""
      ? "unexpected end of query"
      : `unexpected ${JSON.stringify(token.slice(0, 40))}`;
    throw syntaxError(query, error.from, what);
  }
}

/** Converts supported subtrees to AST parts; string/regex errors carry their position. */
export class TreeWalker {
  readonly #query: string;

  constructor(query: string) {
    this.#query = query;
  }

  matcher(node: SyntaxNode): LabelMatcher {
    const name = this.text(node.getChild("Identifier")!);
    const opNode = childList(node).find((child) => child.name in MATCH_OPS)!;
    const op = MATCH_OPS[opNode.name]!;
    const value = this.#string(node.getChild("String")!);
    if (op === "=~" || op === "!~") this.#regex(value, true, node);
    return { name, op, value };
  }

  pipeline(node: SyntaxNode): Stage[] {
    const stages: Stage[] = [];
    for (const child of childList(node)) {
      if (child.name === "PipelineExpr") stages.push(...this.pipeline(child));
      if (child.name === "PipelineStage") stages.push(...this.#stage(child));
    }
    return stages;
  }

  #stage(node: SyntaxNode): Stage[] {
    const lineFilters = node.getChild("LineFilters");
    if (lineFilters) {
      return descendants(lineFilters, "LineFilter").map((filter) => this.#lineFilter(filter));
    }
    const body = childList(node).find((child) => child.name !== "Pipe");
    switch (body?.name) {
      case "LabelParser":
        return [{ kind: "json" }]; // other parsers were rejected as unsupported
      case "LabelFilter":
        return [{ kind: "label_filter", filter: this.labelFilter(body) }];
      case "LineFormatExpr":
        return [this.#lineFormat(body.getChild("String")!)];
    }
    throw syntaxError(this.#query, node.from, `unexpected ${JSON.stringify(this.text(node))}`);
  }

  #lineFilter(node: SyntaxNode): Stage {
    const op = LINE_OPS[node.getChild("Filter")!.firstChild!.name]!;
    const values = descendants(node, "String").map((s) => this.#string(s));
    if (op === "|~" || op === "!~") { for (const value of values) this.#regex(value, false, node); }
    return { kind: "line_filter", filter: { op, values } };
  }

  labelFilter(node: SyntaxNode): LabelFilter {
    const kids = childList(node);
    const nested = kids.filter((child) => child.name === "LabelFilter");
    if (nested.length === 2) {
      return {
        kind: kids.some((child) => child.name === "Or") ? "or" : "and",
        left: this.labelFilter(nested[0]!),
        right: this.labelFilter(nested[1]!),
      };
    }
    if (nested.length === 1) return this.labelFilter(nested[0]!); // `( … )`
    const first = kids[0];
    if (first?.name === "Matcher") return { kind: "match", matcher: this.matcher(first) };
    if (first?.name === "NumberFilter") {
      const name = this.text(first.getChild("Identifier")!);
      const opNode = childList(first).find((child) => child.name in NUMBER_OPS)!;
      const literal = this.text(first.getChild("LiteralExpr")!).replace(/\s+/g, "");
      const value = Number(literal);
      if (!Number.isFinite(value)) {
        throw syntaxError(this.#query, first.from, `${JSON.stringify(literal)} is not a number`);
      }
      return { kind: "number", name, op: NUMBER_OPS[opNode.name]!, value };
    }
    throw syntaxError(this.#query, node.from, `unexpected ${JSON.stringify(this.text(node))}`);
  }

  #lineFormat(node: SyntaxNode): Stage {
    try {
      return { kind: "line_format", template: parseLineTemplate(this.#string(node)) };
    } catch (error) {
      if (!(error instanceof TemplateActionError)) throw error;
      throw new LogQLError(
        "unsupported",
        `Unsupported LogQL: line_format template action "${error.action}" ${SUBSET} ` +
          "(only {{.label}} substitutions)",
        node.from,
      );
    }
  }

  #string(node: SyntaxNode): string {
    try {
      return unquoteLogQL(this.text(node));
    } catch (error) {
      const offset = typeof (error as Error).cause === "number" ? (error as Error).cause : 0;
      throw syntaxError(this.#query, node.from + (offset as number), (error as Error).message);
    }
  }

  #regex(pattern: string, anchored: boolean, node: SyntaxNode): void {
    try {
      compileRegex(pattern, anchored);
    } catch (error) {
      throw syntaxError(this.#query, node.from, (error as Error).message);
    }
  }

  text(node: SyntaxNode): string {
    return this.#query.slice(node.from, node.to);
  }
}

/** Loki refuses selectors that match every stream; so do we, with Loki's reason. */
function requireNonEmptyMatcher(query: string, node: SyntaxNode, matchers: LabelMatcher[]) {
  const selective = matchers.some((m) =>
    (m.op === "=" && m.value !== "") || (m.op === "=~" && !compileRegex(m.value, true).test(""))
  );
  if (!selective) {
    throw syntaxError(
      query,
      node.from,
      "queries require at least one regexp or equality matcher that does not have an " +
        `empty-compatible value, e.g. {service="router"}`,
    );
  }
}

export function syntaxError(query: string, offset: number, what: string): LogQLError {
  const before = query.slice(0, offset).split("\n");
  const line = before.length;
  const col = before.at(-1)!.length + 1;
  return new LogQLError(
    "syntax",
    `Cannot parse LogQL: syntax error at line ${line}, col ${col}: ${what}`,
    offset,
  );
}

function describeMetric(text: string): string {
  const word = /^\s*([A-Za-z_]+)/.exec(text)?.[1];
  return word ? `"${word}(…)"` : JSON.stringify(text.trim().slice(0, 40));
}

function containsError(node: SyntaxNode): boolean {
  let found = false;
  node.toTree().iterate({
    enter: (ref) => {
      if (ref.type.isError) found = true;
      return !found;
    },
  });
  return found;
}

export function childList(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let child = node.firstChild; child !== null; child = child.nextSibling) out.push(child);
  return out;
}

/** Descendants named `name`, in order, not looking inside a match. */
function descendants(node: SyntaxNode, name: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (const child of childList(node)) {
    if (child.name === name) out.push(child);
    else out.push(...descendants(child, name));
  }
  return out;
}
