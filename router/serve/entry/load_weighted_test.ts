import assert from "node:assert/strict";
import { backendView, seededRandom } from "../../../tests/_support/router/views.ts";
import { type BackendLoadSignal, LoadWeightedPolicy } from "./load_weighted.ts";

function loads(entries: Record<string, BackendLoadSignal>) {
  return (id: string) => entries[id];
}

function share(policy: LoadWeightedPolicy, candidates: ReturnType<typeof backendView>[]) {
  const counts = new Map<string, number>();
  const picks = 10_000;
  for (let i = 0; i < picks; i++) {
    const id = policy.pick(candidates).id;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return (id: string) => (counts.get(id) ?? 0) / picks;
}

Deno.test("LoadWeightedPolicy steers away from a highly utilised backend at equal in-flight", () => {
  const candidates = ["a:1", "b:1", "c:1", "d:1"].map((id) => backendView(id, 1));
  const policy = new LoadWeightedPolicy({
    random: seededRandom(11),
    loadOf: loads({
      "a:1": { utilisation: 0.95, inFlight: 1 },
      "b:1": { utilisation: 0.1, inFlight: 1 },
      "c:1": { utilisation: 0.2, inFlight: 1 },
      "d:1": { utilisation: 0.15, inFlight: 1 },
    }),
  });
  const got = share(policy, candidates);
  // "a" wins no pair: every other candidate scores lower.
  assert.equal(got("a:1"), 0);
  assert.ok(got("b:1") > got("c:1"), "the least utilised wins most pairs");
});

Deno.test("LoadWeightedPolicy uses the larger of live and reported in-flight counts", () => {
  const candidates = [backendView("a:1", 0), backendView("b:1", 2)];
  // "a" looks idle to this router but reports 5 in flight (other routers' requests).
  const policy = new LoadWeightedPolicy({
    random: seededRandom(2),
    loadOf: loads({
      "a:1": { utilisation: 0.5, inFlight: 5 },
      "b:1": { utilisation: 0.5, inFlight: 0 },
    }),
  });
  for (let i = 0; i < 50; i++) assert.equal(policy.pick(candidates).id, "b:1");
});

Deno.test("LoadWeightedPolicy falls back to live in-flight counts when a sample has no report", () => {
  const candidates = [backendView("busy:1", 3), backendView("idle:1", 0)];
  // Only "idle" reports, and reports saturation: ignored, the pair compares in-flight.
  const policy = new LoadWeightedPolicy({
    random: seededRandom(5),
    loadOf: loads({ "idle:1": { utilisation: 1, inFlight: 0 } }),
  });
  for (let i = 0; i < 50; i++) assert.equal(policy.pick(candidates).id, "idle:1");
  const blind = new LoadWeightedPolicy({ random: seededRandom(5) });
  for (let i = 0; i < 50; i++) assert.equal(blind.pick(candidates).id, "idle:1");
});

Deno.test("LoadWeightedPolicy weighs utilisation by utilisationWeight", () => {
  const candidates = [backendView("a:1", 0), backendView("b:1", 1)];
  const loadOf = loads({
    "a:1": { utilisation: 0.9, inFlight: 0 },
    "b:1": { utilisation: 0.1, inFlight: 1 },
  });
  // k = 4: a scores 3.6, b scores 1.4 → b. k = 1: a 0.9, b 1.1 → a.
  const heavy = new LoadWeightedPolicy({ random: seededRandom(1), loadOf });
  const light = new LoadWeightedPolicy({ random: seededRandom(1), loadOf, utilisationWeight: 1 });
  for (let i = 0; i < 20; i++) {
    assert.equal(heavy.pick(candidates).id, "b:1");
    assert.equal(light.pick(candidates).id, "a:1");
  }
  assert.throws(() => new LoadWeightedPolicy({ utilisationWeight: -1 }), RangeError);
});
