import assert from "node:assert/strict";
import fc from "fast-check";
import { diagnose, MIN_DOCTOR_REQUESTS, MIN_DOCTOR_SPAN_MS } from "./doctor.ts";

const enough = { requests: MIN_DOCTOR_REQUESTS, spanMs: MIN_DOCTOR_SPAN_MS };

const busy = {
  traffic: enough,
  experts: 64,
  utilisation: 0.4,
  latencyCv: 0.8,
  top10Share: 0.62,
  tokensPerS: 2000,
};

Deno.test("diagnose() answers each check at its threshold", () => {
  const report = diagnose(busy);
  assert.deepEqual(report.checks.map((c) => c.answer), ["yes", "yes", "yes", "yes", "yes"]);
  assert.equal(report.verdict, "deploy now");
  assert.equal(report.checks[4]!.value, 2000 * 86_400);
  assert.equal(report.checks[4]!.measured, "172.8 M tokens/day (extrapolated)");
  // Exactly at a threshold is not beyond it.
  const edge = diagnose({
    traffic: enough,
    experts: 16,
    utilisation: 0.7,
    latencyCv: 0.3,
    top10Share: 0.5,
    tokensPerS: 100e6 / 86_400,
  });
  assert.deepEqual(edge.checks.map((c) => c.answer), ["no", "no", "no", "no", "no"]);
  assert.equal(edge.verdict, "not needed");
});

Deno.test("diagnose() verdict: 1–2 yes → pilot, 3+ → deploy now", () => {
  const two = diagnose({ ...busy, latencyCv: 0.1, top10Share: 0.2, tokensPerS: 10 });
  assert.equal(two.yes, 2);
  assert.equal(two.verdict, "pilot");
  const three = diagnose({ ...busy, latencyCv: 0.1, tokensPerS: 10 });
  assert.equal(three.yes, 3);
  assert.equal(three.verdict, "deploy now");
});

Deno.test("diagnose() says unknown without data and does not count it", () => {
  const report = diagnose({
    traffic: enough,
    experts: 32,
    utilisation: undefined,
    latencyCv: undefined,
    top10Share: Number.NaN,
    tokensPerS: undefined,
  });
  assert.deepEqual(report.checks.map((c) => c.answer), [
    "yes",
    "unknown",
    "unknown",
    "unknown",
    "unknown",
  ]);
  assert.equal(report.checks[1]!.measured, "no data yet");
  assert.equal(report.verdict, "pilot");
});

Deno.test("diagnose() withholds the verdict until the minimum of traffic and time", () => {
  // The case: after 2 requests it said "deploy now (3 yes)".
  const early = diagnose({ ...busy, traffic: { requests: 2, spanMs: 1000 } });
  assert.equal(early.verdict, "not enough data");
  assert.match(early.insufficient!, /2 requests over 1 s \(needs 100 requests over 60 s\)/);
  assert.equal(early.yes, 5);
  assert.equal(diagnose({ ...busy, traffic: undefined }).verdict, "not enough data");
  // Enough requests but too short a span, and the reverse.
  const short = { requests: 10_000, spanMs: MIN_DOCTOR_SPAN_MS - 1 };
  assert.equal(diagnose({ ...busy, traffic: short }).verdict, "not enough data");
  const few = { requests: MIN_DOCTOR_REQUESTS - 1, spanMs: 3_600_000 };
  assert.equal(diagnose({ ...busy, traffic: few }).verdict, "not enough data");
  assert.equal(diagnose(busy).verdict, "deploy now");
});

Deno.test("diagnose() reads saturation, not executor busy time, with both shown", () => {
  // The case: executor 8 % busy while the host saturated.
  const saturated = diagnose({ ...busy, utilisation: 0.08, saturation: 0.97, bottleneck: "host" });
  const check = saturated.checks.find((c) => c.id === "utilisation")!;
  assert.equal(check.answer, "no");
  assert.equal(check.value, 0.97);
  assert.equal(check.measured, "saturation 97 % (host), executor busy 8 %");
  const healthy = diagnose({ ...busy, utilisation: 0.3, saturation: 0.35 });
  assert.equal(healthy.checks.find((c) => c.id === "utilisation")!.answer, "yes");
});

Deno.test("diagnose(): the verdict never contradicts the yes count (all inputs)", () => {
  const maybe = (arb: fc.Arbitrary<number>) => fc.option(arb, { nil: undefined });
  fc.assert(fc.property(
    fc.record({
      experts: maybe(fc.integer({ min: 1, max: 512 })),
      utilisation: maybe(fc.double({ min: 0, max: 1, noNaN: true })),
      saturation: maybe(fc.double({ min: 0, max: 1, noNaN: true })),
      latencyCv: maybe(fc.double({ min: 0, max: 5, noNaN: true })),
      top10Share: maybe(fc.double({ min: 0, max: 1, noNaN: true })),
      tokensPerS: maybe(fc.double({ min: 0, max: 1e6, noNaN: true })),
      traffic: fc.record({
        requests: fc.integer({ min: 0, max: 1000 }),
        spanMs: fc.integer({ min: 0, max: 600_000 }),
      }),
    }),
    (inputs) => {
      const report = diagnose(inputs);
      const yes = report.checks.filter((c) => c.answer === "yes").length;
      assert.equal(report.yes, yes);
      const enoughData = inputs.traffic.requests >= MIN_DOCTOR_REQUESTS &&
        inputs.traffic.spanMs >= MIN_DOCTOR_SPAN_MS;
      if (!enoughData) assert.equal(report.verdict, "not enough data");
      else {assert.equal(
          report.verdict,
          yes >= 3 ? "deploy now" : yes >= 1 ? "pilot" : "not needed",
        );}
      for (const c of report.checks) {
        // An answer always rests on a value; unknown never does.
        assert.equal(c.answer === "unknown", c.value === null);
      }
      const load = report.checks.find((c) => c.id === "utilisation")!;
      if (inputs.saturation !== undefined) {
        assert.equal(load.answer, inputs.saturation < 0.7 ? "yes" : "no");
      }
    },
  ));
});

Deno.test("diagnose(): a pool that shed is not below capacity, whatever its saturation", () => {
  const report = diagnose({
    experts: 64,
    utilisation: 0.05,
    saturation: 0.4,
    shedShare: 0.25,
    bottleneck: "queue",
    latencyCv: 0.1,
    top10Share: 0.2,
    tokensPerS: 10,
  });
  const check = report.checks.find((c) => c.id === "utilisation")!;
  assert.equal(check.answer, "no");
  assert.equal(
    check.measured,
    "saturation 40 % (queue), shedding in 25 % of busy rounds, executor busy 5 %",
  );
});
