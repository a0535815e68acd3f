import assert from "node:assert/strict";
import { LogQLError } from "./logql_ast.ts";
import { parseLogQL } from "./logql_parser.ts";

function rejects(query: string, kind: "syntax" | "unsupported", message: string | RegExp): void {
  assert.throws(() => parseLogQL(query), (error: unknown) => {
    assert.ok(error instanceof LogQLError, `expected a LogQLError for ${query}`);
    assert.equal(error.kind, kind, `${query}: ${error.message}`);
    if (typeof message === "string") assert.equal(error.message, message);
    else assert.match(error.message, message);
    return true;
  });
}

Deno.test("parseLogQL() reads every selector matcher operator", () => {
  const query = parseLogQL('{service="router", level!="debug", backend=~"backend-[12]", x!~"a|b"}');
  assert.deepEqual(query.selector, [
    { name: "service", op: "=", value: "router" },
    { name: "level", op: "!=", value: "debug" },
    { name: "backend", op: "=~", value: "backend-[12]" },
    { name: "x", op: "!~", value: "a|b" },
  ]);
  assert.deepEqual(query.pipeline, []);
});

Deno.test("parseLogQL() reads chained line filters, `or` alternatives and string escapes", () => {
  const query = parseLogQL(
    '{service="router"} |= "a\\"b" != "x" or `y` |~ `re[0-9]` !~ "(?i)debug"',
  );
  assert.deepEqual(query.pipeline, [
    { kind: "line_filter", filter: { op: "|=", values: ['a"b'] } },
    { kind: "line_filter", filter: { op: "!=", values: ["x", "y"] } },
    { kind: "line_filter", filter: { op: "|~", values: ["re[0-9]"] } },
    { kind: "line_filter", filter: { op: "!~", values: ["(?i)debug"] } },
  ]);
});

Deno.test("parseLogQL() reads json, label filters with and/or/comma/parentheses, line_format", () => {
  const query = parseLogQL(
    '{service="router"} | json | status >= 400 and level="error" or ms > 2.5 | x = -3, (y=~"a.*" or z != "q") | line_format "{{.request_id}}: {{ .status }}"',
  );
  assert.deepEqual(query.pipeline, [
    { kind: "json" },
    {
      kind: "label_filter",
      filter: {
        kind: "or",
        left: {
          kind: "and",
          left: { kind: "number", name: "status", op: ">=", value: 400 },
          right: { kind: "match", matcher: { name: "level", op: "=", value: "error" } },
        },
        right: { kind: "number", name: "ms", op: ">", value: 2.5 },
      },
    },
    {
      kind: "label_filter",
      filter: {
        kind: "and",
        left: { kind: "number", name: "x", op: "==", value: -3 },
        right: {
          kind: "or",
          left: { kind: "match", matcher: { name: "y", op: "=~", value: "a.*" } },
          right: { kind: "match", matcher: { name: "z", op: "!=", value: "q" } },
        },
      },
    },
    {
      kind: "line_format",
      template: [{ label: "request_id" }, { text: ": " }, { label: "status" }],
    },
  ]);
});

Deno.test("parseLogQL() reads every numeric comparison", () => {
  const ops = [">", ">=", "<", "<=", "==", "!="] as const;
  for (const op of ops) {
    const [stage] = parseLogQL(`{service="router"} | ms ${op} 1e3`).pipeline;
    assert.deepEqual(stage, {
      kind: "label_filter",
      filter: { kind: "number", name: "ms", op, value: 1000 },
    });
  }
});

Deno.test("parseLogQL() names each construct outside the subset", () => {
  const cases: [string, string][] = [
    ['{a="b"} | logfmt', '"logfmt" parser is not in the supported subset (json only)'],
    ['{a="b"} | unpack', '"unpack" parser is not in the supported subset (json only)'],
    ['{a="b"} | pattern `<ip> <_>`', '"pattern" parser is not in the supported subset (json only)'],
    ['{a="b"} | regexp `(?P<x>.)`', '"regexp" parser is not in the supported subset (json only)'],
    [
      '{a="b"} | json x="y"',
      '"json" with extraction expressions ("json x="y"") is not in the supported subset (plain "| json" only)',
    ],
    [
      'rate({a="b"}[5m])',
      'metric query "rate(…)" where a log query is expected (a stream selector and a pipeline)',
    ],
    [
      'sum by (level) (count_over_time({a="b"}[1m]))',
      'metric query "sum(…)" where a log query is expected (a stream selector and a pipeline)',
    ],
    [
      '{a="b"} | unwrap ms',
      '"unwrap" outside a range aggregation is not in the supported subset (e.g. avg_over_time(… | unwrap ms [1m]))',
    ],
    ['{a="b"} | label_format x=y', '"label_format" is not in the supported subset'],
    ['{a="b"} | drop x', '"drop" is not in the supported subset'],
    ['{a="b"} | keep x', '"keep" is not in the supported subset'],
    ['{a="b"} | decolorize', '"decolorize" is not in the supported subset'],
    ['{a="b"} |> "<_> x"', 'pattern line filter "|>" is not in the supported subset'],
    ['{a="b"} |= ip("10.0.0.1")', '"ip()" line filter is not in the supported subset'],
    [
      '{a="b"} | json | ms > 5s',
      'duration label filter "ms > 5s" is not in the supported subset (numbers only)',
    ],
    [
      '{a="b"} | json | size > 1KB',
      'bytes label filter "size > 1KB" is not in the supported subset (numbers only)',
    ],
    ['{a="b"} offset 1h', '"offset" is not in the supported subset'],
    [
      '{a="b"} | line_format "{{ToUpper .msg}}"',
      'line_format template action "{{ToUpper .msg}}" is not in the supported subset (only {{.label}} substitutions)',
    ],
    [
      '{a="b"} | line_format "{{- .msg}}"',
      'line_format template action "{{- .msg}}" is not in the supported subset (only {{.label}} substitutions)',
    ],
  ];
  for (const [query, message] of cases) {
    rejects(query, "unsupported", `Unsupported LogQL: ${message}`);
  }
});

Deno.test("parseLogQL() reports syntax errors with line and column", () => {
  rejects(
    '{service="router"',
    "syntax",
    "Cannot parse LogQL: syntax error at line 1, col 18: unexpected end of query",
  );
  rejects(
    '{a="b"} | json | y == "s"',
    "syntax",
    'Cannot parse LogQL: syntax error at line 1, col 23: unexpected "\\"s\\""',
  );
  rejects(
    '{a="b"} | json\n| x >',
    "syntax",
    "Cannot parse LogQL: syntax error at line 2, col 6: unexpected end of query",
  );
  rejects("", "syntax", "Cannot parse LogQL: syntax error at line 1, col 1: the query is empty");
  rejects(
    '{a="b"} |= "\\q"',
    "syntax",
    'Cannot parse LogQL: syntax error at line 1, col 13: invalid escape "\\q"',
  );
  rejects(
    '{a="b"} |~ "(["',
    "syntax",
    /^Cannot parse LogQL: syntax error at line 1, col 9: invalid regular expression "\(\["/,
  );
  rejects('{a=~"(["}', "syntax", /invalid regular expression/);
});

Deno.test("parseLogQL() refuses selectors that match every stream, like Loki", () => {
  for (const query of ['{a=~".*"}', '{a!="b"}', '{a=""}', "{}"]) {
    rejects(query, "syntax", /Cannot parse LogQL/);
  }
  assert.equal(parseLogQL('{a=~".+"}').selector.length, 1);
});
