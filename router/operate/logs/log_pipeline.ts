/**
 * @module Evaluates a parsed LogQL query on one log line: the stream selector on the
 * stream labels, then each pipeline stage in order, with Loki's semantics:
 *
 * - label matchers compare against `""` when the label is not set; regexes are anchored;
 * - line filters search the current line (after any earlier `line_format`);
 * - `| json` adds the labels of `json_labels.ts`;
 * - a numeric label filter drops lines without the label; a value that is not a number
 *   keeps the line and sets `__error__="LabelFilterErr"` (Loki does the same), and once
 *   `__error__` is set numeric filters pass and only string matchers can drop the line;
 * - `and` evaluates both sides, `or` stops at the first true side;
 * - result labels with an empty value are left out (empty means unset, as in Prometheus).
 */
import type {
  LabelFilter,
  LabelMatcher,
  LineFilter,
  LogQuery,
  NumberOp,
  Stage,
} from "./logql_ast.ts";
import { compileRegex } from "./logql_strings.ts";
import { jsonLabels } from "./json_labels.ts";
import { renderLineTemplate } from "./line_template.ts";

/** A log line with its labels. */
export interface LogEntry {
  labels: Record<string, string>;
  line: string;
}

/** A query compiled once (regexes built) and applied to many lines. */
export interface CompiledQuery {
  /** Whether a stream with these labels is selected. */
  matchesStream(labels: Readonly<Record<string, string>>): boolean;
  /**
   * The line filters that come before any other stage, on the raw line: a cheap test a
   * reader can run before it parses the line at all (`process` runs them again).
   */
  lineMayMatch(line: string): boolean;
  /**
   * Runs the pipeline on a line of a selected stream; `null` when a stage drops it.
   * `parsed` may carry `JSON.parse(line)` so `| json` on the unchanged line reuses it.
   */
  process(
    line: string,
    streamLabels: Readonly<Record<string, string>>,
    parsed?: { value: unknown },
  ): LogEntry | null;
}

interface State {
  line: string;
  /** `JSON.parse` of the original line, while the line is unchanged. */
  parsed: { value: unknown } | undefined;
  labels: Record<string, string>;
  readonly stream: Readonly<Record<string, string>>;
}

type StageFn = (state: State) => boolean;

/** Compiles `query`; throws `SyntaxError` for a regex that does not compile. */
export function compileQuery(query: LogQuery): CompiledQuery {
  const selector = query.selector.map(compileMatcher);
  const stages = query.pipeline.map(compileStage);
  const firstOther = query.pipeline.findIndex((stage) => stage.kind !== "line_filter");
  const leading = query.pipeline.slice(0, firstOther === -1 ? undefined : firstOther)
    .map((stage) => compileLineFilter((stage as Extract<Stage, { kind: "line_filter" }>).filter));
  return {
    matchesStream: (labels) => selector.every((test) => test(labels)),
    lineMayMatch: (line) => leading.every((test) => test(line)),
    process(line, streamLabels, parsed) {
      const state: State = { line, parsed, labels: { ...streamLabels }, stream: streamLabels };
      for (const stage of stages) if (!stage(state)) return null;
      const labels: Record<string, string> = {};
      for (const [name, value] of Object.entries(state.labels)) {
        if (value !== "") labels[name] = value;
      }
      return { labels, line: state.line };
    },
  };
}

function compileStage(stage: Stage): StageFn {
  switch (stage.kind) {
    case "line_filter": {
      const test = compileLineFilter(stage.filter);
      return (state) => test(state.line);
    }
    case "json":
      return (state) => {
        Object.assign(state.labels, jsonLabels(state.line, state.stream, state.parsed));
        return true;
      };
    case "label_filter": {
      const test = compileLabelFilter(stage.filter);
      return (state) => test(state.labels);
    }
    case "line_format":
      return (state) => {
        state.line = renderLineTemplate(stage.template, state.labels);
        state.parsed = undefined;
        return true;
      };
  }
}

function compileLineFilter(filter: LineFilter): (line: string) => boolean {
  const regex = filter.op === "|~" || filter.op === "!~";
  const tests = filter.values.map((value) => {
    if (!regex) return (line: string) => line.includes(value);
    const pattern = compileRegex(value, false);
    return (line: string) => pattern.test(line);
  });
  const any = (line: string) => tests.some((test) => test(line));
  return filter.op === "|=" || filter.op === "|~" ? any : (line) => !any(line);
}

function compileMatcher(
  matcher: LabelMatcher,
): (labels: Readonly<Record<string, string>>) => boolean {
  const { name, op, value } = matcher;
  const get = (
    labels: Readonly<Record<string, string>>,
  ) => (Object.hasOwn(labels, name) ? labels[name]! : "");
  switch (op) {
    case "=":
      return (labels) => get(labels) === value;
    case "!=":
      return (labels) => get(labels) !== value;
    case "=~": {
      const pattern = compileRegex(value, true);
      return (labels) => pattern.test(get(labels));
    }
    case "!~": {
      const pattern = compileRegex(value, true);
      return (labels) => !pattern.test(get(labels));
    }
  }
}

const COMPARE: Record<NumberOp, (a: number, b: number) => boolean> = {
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  "==": (a, b) => a === b,
  "!=": (a, b) => a !== b,
};

/** Compiles a label filter; it may set `__error__` on the labels it tests. */
export function compileLabelFilter(
  filter: LabelFilter,
): (labels: Record<string, string>) => boolean {
  switch (filter.kind) {
    case "match":
      return compileMatcher(filter.matcher);
    case "and": {
      const left = compileLabelFilter(filter.left);
      const right = compileLabelFilter(filter.right);
      return (labels) => {
        const l = left(labels); // both sides run: each may set __error__
        return right(labels) && l;
      };
    }
    case "or": {
      const left = compileLabelFilter(filter.left);
      const right = compileLabelFilter(filter.right);
      return (labels) => left(labels) || right(labels);
    }
    case "number": {
      const { name, op, value } = filter;
      const compare = COMPARE[op];
      return (labels) => {
        if (labels["__error__"]) return true;
        if (!Object.hasOwn(labels, name)) return false;
        const text = labels[name]!.trim();
        const number = text === "" ? NaN : Number(text);
        if (Number.isNaN(number)) {
          labels["__error__"] = "LabelFilterErr";
          labels["__error_details__"] = `strconv.ParseFloat: parsing ${
            JSON.stringify(text)
          }: invalid syntax`;
          return true;
        }
        return compare(number, value);
      };
    }
  }
}
