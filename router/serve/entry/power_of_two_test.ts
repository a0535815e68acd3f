import assert from "node:assert/strict";
import { backendView, seededRandom } from "../../../tests/_support/router/views.ts";
import { PowerOfTwoPolicy } from "./power_of_two.ts";

/** A random source that replays the given values. */
function replay(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

Deno.test("PowerOfTwoPolicy.pick() takes the less loaded of the two samples", () => {
  const candidates = [backendView("a:1", 5), backendView("b:1", 1), backendView("c:1", 3)];
  // Samples index 0 ("a", 5 in flight) then, among the other two, index 1 → "c" (3).
  const policy = new PowerOfTwoPolicy({ random: replay(0.1, 0.9) });
  assert.equal(policy.pick(candidates).id, "c:1");
  // Samples "b" (index 1), then index 0 of the others → "a": "b" has fewer.
  const other = new PowerOfTwoPolicy({ random: replay(0.5, 0.1) });
  assert.equal(other.pick(candidates).id, "b:1");
});

Deno.test("PowerOfTwoPolicy.pick() never samples the same candidate twice", () => {
  const candidates = [backendView("a:1", 9), backendView("b:1", 0)];
  // Both draws land on index 0; the second must shift to "b".
  const policy = new PowerOfTwoPolicy({ random: replay(0, 0) });
  assert.equal(policy.pick(candidates).id, "b:1");
});

Deno.test("PowerOfTwoPolicy.pick() tolerates a random source returning 1", () => {
  const candidates = [backendView("a:1"), backendView("b:1"), backendView("c:1")];
  const policy = new PowerOfTwoPolicy({ random: () => 1 });
  assert.ok(candidates.includes(policy.pick(candidates)));
});

Deno.test("PowerOfTwoPolicy sends almost no traffic to one backend with high in-flight", () => {
  const candidates = [
    backendView("hot:1", 64),
    backendView("b:1", 1),
    backendView("c:1", 2),
    backendView("d:1", 0),
  ];
  const policy = new PowerOfTwoPolicy({ random: seededRandom(42) });
  const picks = 10_000;
  let hot = 0;
  const others = new Set<string>();
  for (let i = 0; i < picks; i++) {
    const chosen = policy.pick(candidates);
    if (chosen.id === "hot:1") hot++;
    else others.add(chosen.id);
  }
  assert.ok(hot / picks < 0.01, `hot backend got ${hot} of ${picks}`);
  assert.deepEqual([...others].sort(), ["b:1", "c:1", "d:1"]);
});

Deno.test("PowerOfTwoPolicy prefers the lightly loaded backend among two", () => {
  const candidates = [backendView("busy:1", 3), backendView("idle:1", 0)];
  const policy = new PowerOfTwoPolicy({ random: seededRandom(3) });
  for (let i = 0; i < 100; i++) assert.equal(policy.pick(candidates).id, "idle:1");
});
