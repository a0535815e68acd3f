import assert from "node:assert/strict";
import { LogQLError } from "./logql_ast.ts";
import { parseQuery } from "./logql_query.ts";
import { formatSampleValue } from "./matrix_result.ts";

Deno.test("parseQuery() reads metric queries into range and vector aggregations", () => {
  const parsed = parseQuery(
    'topk(3, sum by (request_type) (rate({service="router"} | json | status >= 500 [5m])))',
  );
  assert.equal(parsed.kind, "metric");
  if (parsed.kind !== "metric") return;
  const top = parsed.metric;
  assert.equal(top.kind, "vector");
  if (top.kind !== "vector") return;
  assert.equal(top.op, "topk");
  assert.equal(top.param, 3);
  const sum = top.inner;
  assert.equal(sum.kind === "vector" && sum.op, "sum");
  assert.deepEqual(sum.kind === "vector" && sum.grouping, {
    without: false,
    labels: ["request_type"],
  });
  const leaf = sum.kind === "vector" ? sum.inner : sum;
  assert.equal(leaf.kind === "range" && leaf.op, "rate");
  assert.equal(leaf.kind === "range" && leaf.rangeMs, 300_000);
  assert.deepEqual(leaf.kind === "range" && leaf.log.selector, [
    { name: "service", op: "=", value: "router" },
  ]);
  assert.equal(leaf.kind === "range" && leaf.log.pipeline.length, 2);

  const q = parseQuery(
    'quantile_over_time(0.99, {service="router"} | json | unwrap ms | __error__="" [1m]) by (level)',
  );
  assert.ok(q.kind === "metric" && q.metric.kind === "range");
  if (q.kind !== "metric" || q.metric.kind !== "range") return;
  assert.equal(q.metric.param, 0.99);
  assert.equal(q.metric.unwrap?.label, "ms");
  assert.equal(q.metric.unwrap?.postFilters.length, 1);
  assert.deepEqual(q.metric.grouping, { without: false, labels: ["level"] });
  assert.equal(parseQuery('{service="router"} |= "x"').kind, "log");
});

Deno.test("parseQuery() names each metric construct outside the subset", () => {
  const cases: [string, RegExp][] = [
    ['count_over_time({a="b"}[1m]) / 2', /binary operation/],
    ['count_over_time({a="b"}[1m] offset 5m)', /"offset"/],
    ['stddev_over_time({a="b"} | unwrap x [1m])', /range aggregation "stddev_over_time"/],
    ['bottomk(2, rate({a="b"}[1m]))', /vector aggregation "bottomk"/],
    ['count_over_time({a="b"} | json | unwrap ms [1m])', /"\| unwrap" in count_over_time/],
    ['sum_over_time({a="b"}[1m])', /sum_over_time without "\| unwrap <label>"/],
    ['count_over_time({a="b"}[1m]) by (x)', /grouping in count_over_time/],
    ['avg_over_time({a="b"} | unwrap duration(ms) [1m])', /unwrap conversion "duration\(\)"/],
    ['label_replace(rate({a="b"}[1m]), "x", "$1", "a", "(.*)")', /"label_replace"/],
  ];
  for (const [query, message] of cases) {
    assert.throws(() => parseQuery(query), (error: Error) => {
      assert.ok(error instanceof LogQLError, `${query}: ${error}`);
      assert.equal(error.kind, "unsupported", `${query}: ${error.message}`);
      assert.match(error.message, message, query);
      return true;
    });
  }
});

Deno.test("sample values are written like Loki's (no exponent)", () => {
  assert.equal(formatSampleValue(0.5), "0.5");
  assert.equal(formatSampleValue(1e21), "1000000000000000000000");
  assert.equal(formatSampleValue(1.5e-7), "0.00000015");
  assert.equal(formatSampleValue(-2.5e-7), "-0.00000025");
  assert.equal(formatSampleValue(Infinity), "+Inf");
  assert.equal(formatSampleValue(NaN), "NaN");
});
