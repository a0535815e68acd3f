import assert from "node:assert/strict";
import { backendView } from "../../../tests/_support/router/views.ts";
import { RoundRobinPolicy } from "./round_robin.ts";

Deno.test("RoundRobinPolicy.pick() visits candidates in list order, then wraps", () => {
  const candidates = ["a:1", "b:1", "c:1"].map((id) => backendView(id));
  const policy = new RoundRobinPolicy();
  const order = Array.from({ length: 7 }, () => policy.pick(candidates).id);
  assert.deepEqual(order, ["a:1", "b:1", "c:1", "a:1", "b:1", "c:1", "a:1"]);
});

Deno.test("RoundRobinPolicy.pick() ignores load", () => {
  const candidates = [backendView("a:1", 100), backendView("b:1", 0)];
  const policy = new RoundRobinPolicy();
  assert.deepEqual([policy.pick(candidates).id, policy.pick(candidates).id], ["a:1", "b:1"]);
});

Deno.test("RoundRobinPolicy.pick() stays in range when the candidate list shrinks", () => {
  const policy = new RoundRobinPolicy();
  const three = ["a:1", "b:1", "c:1"].map((id) => backendView(id));
  policy.pick(three);
  policy.pick(three);
  const one = [backendView("z:1")];
  assert.equal(policy.pick(one).id, "z:1");
  const two = [backendView("x:1"), backendView("y:1")];
  assert.equal(policy.pick(two).id, "y:1");
});
