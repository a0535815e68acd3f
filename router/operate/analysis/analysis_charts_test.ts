/** @module The Analysis page's pure chart shaping (router/operate/dashboard/static/analysis_charts.js). */
import assert from "node:assert/strict";
import {
  activationOption,
  balanceOption,
  correlationCells,
  correlationOption,
  efficiencyOption,
} from "../dashboard/static/analysis_charts.js";

const correlation = {
  experts: 3,
  layers: 2,
  request_types: [
    { request_type: "<img src=x onerror=alert(1)>", layers: [{ layer: 0, shares: [0, 1, 0] }] },
    { request_type: "chat", layers: [{ layer: 0, shares: [0.5, 0.25, 0.25] }] },
  ],
};

Deno.test("correlationCells() lays request types × experts out for one layer", () => {
  const cells = correlationCells(correlation, 0);
  assert.deepEqual(cells.types, ["<img src=x onerror=alert(1)>", "chat"]);
  assert.deepEqual(cells.data, [[0, 0, 0], [1, 0, 1], [2, 0, 0], [0, 1, 0.5], [1, 1, 0.25], [
    2,
    1,
    0.25,
  ]]);
  assert.deepEqual(correlationCells(correlation, 1).data, []);
});

Deno.test("the heatmap tooltip escapes request type names", () => {
  const option = correlationOption(correlation, 0);
  assert.equal(option.visualMap.max, 1, "colour scale up to the largest share");
  assert.equal(
    correlationOption({
      ...correlation,
      request_types: [{ request_type: "chat", layers: [{ layer: 0, shares: [0.05, 0.02, 0] }] }],
    }, 0).visualMap.max,
    0.05,
    "small shares are not washed out by a fixed 0–1 scale",
  );
  const text = option.tooltip.formatter({ data: [1, 0, 1] });
  assert.ok(!text.includes("<img"), text);
  assert.match(text, /&#60;img src=x onerror=alert\(1\)&#62;, layer 0, expert 1: 100.0 %/);
});

Deno.test("activation, efficiency and balance options plot the API's series on time axes", () => {
  const buckets = [1000, 2000];
  const activation = activationOption({
    buckets,
    layers: [{ layer: 0, total_tokens: [3, 4], top: [{ expert: 2, series: [1, 4] }] }],
  }, 0);
  assert.deepEqual(activation.series.map((s: { name: string }) => s.name), [
    "all experts (right axis)",
    "expert 2",
  ]);
  assert.deepEqual(
    activation.series.map((s: { yAxisIndex?: number }) => s.yAxisIndex ?? 0),
    [1, 0],
    "the total on its own axis, so top experts keep their scale",
  );
  assert.deepEqual(activation.series[1].data, [[1000, 1], [2000, 4]]);
  const series = { tokens_s: [5, null], utilisation: [0.5, null], tokens_per_joule: [null, null] };
  const efficiency = efficiencyOption({
    buckets,
    pool: series,
    backends: [{ backend: "b1", ...series }],
  });
  // No power readings: no tokens/J line is drawn.
  assert.deepEqual(efficiency.series.map((s: { name: string }) => s.name), [
    "pool tokens/s",
    "b1 tokens/s",
    "pool utilisation %",
  ]);
  assert.deepEqual(efficiency.series[2].data, [[1000, 50], [2000, null]]);
  const balance = balanceOption({
    buckets: [{ at: 1000, cv: 1, top10_share: 0.4 }],
  });
  assert.deepEqual(balance.series.map((s: { name: string }) => s.name), ["top 10 % share", "CV"]);
  assert.deepEqual(balance.series[0]!.data, [[1000, 0.4]]);
});
