import assert from "node:assert/strict";
import { type ConfigOutcome, summaryMarkdown } from "./summary.ts";

const noPlan: ConfigOutcome = {
  name: "no-plan",
  settings: "every backend hosts every expert",
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
const fixed = { ...noPlan, name: "static", tokensPerS: 800 };
const after = { ...noPlan, name: "switchyard", tokensPerS: 1600, p99: 200, backendCv: 0.2 };
const tuned = { ...after, name: "switchyard-tuned (labelled)", tokensPerS: 1700 };

Deno.test("summaryMarkdown() shows every configuration and the default ÷ each baseline", () => {
  const text = summaryMarkdown([noPlan, fixed, after, tuned], {
    baselines: ["no-plan", "static"],
    after: "switchyard",
  }, ["model demo-moe"]);
  assert.match(
    text,
    /\| measure \| no-plan \| static \| switchyard \| switchyard-tuned \(labelled\) \| switchyard ÷ no-plan \| switchyard ÷ static \|/,
  );
  assert.match(
    text,
    /\| throughput at saturation \(tokens\/s\) \| 1000 \| 800 \| 1600 \| 1700 \| 1\.60× \| 2\.00× \|/,
  );
  assert.match(text, /\| p99 latency under the schedule \(ms\) \| 400\.0 \| 400\.0 \| 200\.0 \|/);
  assert.match(text, /\| tokens per joule \| n\/a \| n\/a \| n\/a \| n\/a \| n\/a \| n\/a \|/);
  assert.match(text, /no power reading on this host/);
  assert.match(text, /- model demo-moe/);
  assert.match(text, /Errors by kind — no-plan: 503: 3; static: 503: 3;/);
  assert.doesNotMatch(text, /Utilisation n\/a/);
});

Deno.test("summaryMarkdown() keeps a missing utilisation n/a, never 0", () => {
  const none = { ...after, utilisation: null, utilisationBalancedness: null };
  const text = summaryMarkdown([noPlan, none], { baselines: ["no-plan"], after: "switchyard" }, []);
  assert.match(text, /\| backend utilisation \(mean\) \| 0\.500 \| n\/a \| n\/a \|/);
  assert.match(text, /Utilisation n\/a: no backend reported one/);
  assert.throws(
    () => summaryMarkdown([noPlan], { baselines: ["x"], after: "no-plan" }, []),
    RangeError,
  );
});
