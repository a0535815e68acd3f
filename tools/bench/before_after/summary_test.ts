import assert from "node:assert/strict";
import { type ConfigOutcome, summaryMarkdown } from "./summary.ts";

const before: ConfigOutcome = {
  name: "baseline",
  settings: "round_robin",
  tokensPerS: 1000,
  p50: 20,
  p99: 400,
  errorRate: 0.01,
  errorKinds: { "503": 3 },
  shedRate: 0,
  backendCv: 0.4,
  logicalCv: 0.8,
  backendBalancedness: 0.4,
  utilisation: 0.5,
  utilisationBalancedness: 0.7,
  tokensPerJoule: null,
};

Deno.test("summaryMarkdown() puts ratios after ÷ before and says n/a without power", () => {
  const after = { ...before, name: "switchyard", tokensPerS: 1600, p99: 200, backendCv: 0.2 };
  const text = summaryMarkdown(before, after, ["model demo-moe"]);
  assert.match(text, /\| throughput at saturation \(tokens\/s\) \| 1000 \| 1600 \| 1\.60× \|/);
  assert.match(text, /\| p99 latency under the schedule \(ms\) \| 400\.0 \| 200\.0 \| 0\.50× \|/);
  assert.match(
    text,
    /\| expert-load CV across backends \(EPLB's target\) \| 0\.400 \| 0\.200 \| 0\.50× \|/,
  );
  assert.match(text, /\| tokens per joule \| n\/a \| n\/a \| n\/a \|/);
  assert.match(text, /no power reading on this host/);
  assert.match(text, /- model demo-moe/);
  assert.match(text, /Errors by kind — before: 503: 3; after: 503: 3\./);
  assert.match(text, /\| shed rate \(512 already outstanding\) \| 0\.0000 \| 0\.0000 \| n\/a \|/);
});
