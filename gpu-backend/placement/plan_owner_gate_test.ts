import assert from "node:assert/strict";
import { ApiError } from "../../shared/errors.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { ownerHeaders } from "../../shared/plan_owner.ts";
import { PlanOwnerGate } from "./plan_owner_gate.ts";

Deno.test("PlanOwnerGate refuses another pool with a 409 naming the owner, logs and counts it", () => {
  const logger = new MemoryLogger();
  const gate = new PlanOwnerGate(logger);
  gate.admit("stage plan 1", new Headers(ownerHeaders({ pool: "a", term: 2 })));
  assert.deepEqual(gate.owner, { pool: "a", term: 2 });
  for (let i = 0; i < 3; i++) {
    assert.throws(
      () => gate.admit("stage plan 7", new Headers(ownerHeaders({ pool: "b", term: 1 }))),
      (error) =>
        error instanceof ApiError && error.code === "conflict" &&
        /Cannot stage plan 7: this backend follows pool "a" \(term 2\)/.test(error.message),
    );
  }
  assert.equal(gate.refusals().get("other_pool"), 3);
  assert.equal(logger.records.filter((l) => l.msg === "plan call refused").length, 1);
  assert.deepEqual(gate.owner, { pool: "a", term: 2 });
});

Deno.test("PlanOwnerGate takes the plan's own owner when the headers name none", () => {
  const gate = new PlanOwnerGate(new MemoryLogger());
  gate.admit("stage plan 1", new Headers(), { pool: "a", term: 0 });
  gate.admit("activate plan 1", new Headers(ownerHeaders({ pool: "a", term: 3 })));
  assert.deepEqual(gate.owner, { pool: "a", term: 3 });
  assert.throws(() => gate.admit("release plan 1", new Headers()), /names no pool and term/);
  assert.throws(
    () => gate.admit("set weights", new Headers({ "x-switchyard-term": "1" })),
    (error) => error instanceof ApiError && error.code === "bad_request",
  );
});
