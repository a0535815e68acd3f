import assert from "node:assert/strict";
import type { PartLoad } from "../../shared/load_report.ts";
import { routedTokenSamples } from "./routed_token_samples.ts";

function load(kind: PartLoad["kind"], layer: number, expert: number, tokens: number): PartLoad {
  const key = kind === "gate"
    ? `L${layer}/gate`
    : `L${layer}/${kind === "expert" ? "E" : "S"}${expert}`;
  return {
    part: key,
    layer,
    kind,
    expert,
    tokens,
    executions: tokens / 2,
    busyMs: 0,
    queueDepth: 0,
  };
}

const PARTS = [
  load("gate", 0, -1, 100),
  load("expert", 1, 0, 8),
  load("expert", 0, 1, 6),
  load("expert", 0, 0, 4),
  load("shared", 0, 0, 100),
];

Deno.test("routedTokenSamples() at expert detail: one series per routed expert, sorted", () => {
  const { tokens, executions } = routedTokenSamples("m", PARTS, "expert");
  assert.deepEqual(tokens, [
    { labels: { model: "m", layer: 0, expert: 0 }, value: 4 },
    { labels: { model: "m", layer: 0, expert: 1 }, value: 6 },
    { labels: { model: "m", layer: 1, expert: 0 }, value: 8 },
  ]);
  assert.deepEqual(executions.map((s) => s.value), [2, 3, 4]);
});

Deno.test("routedTokenSamples() at backend detail: per layer sums, no expert label", () => {
  const { tokens, executions } = routedTokenSamples("m", PARTS, "backend");
  assert.deepEqual(tokens, [
    { labels: { model: "m", layer: 0 }, value: 10 },
    { labels: { model: "m", layer: 1 }, value: 8 },
  ]);
  assert.deepEqual(executions.map((s) => s.value), [5, 4]);
  for (const sample of [...tokens, ...executions]) assert.equal("expert" in sample.labels, false);
});
