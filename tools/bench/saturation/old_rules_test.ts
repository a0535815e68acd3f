import assert from "node:assert/strict";
import { oldDoctorUtilisation, oldHottestShare, oldScaler } from "./old_rules.ts";

Deno.test("the old rules reproduce the issue's readings from executor time alone", () => {
  // Executor 8 % busy while 40 tokens/s flowed: "below 70 %? yes", capacity 500 tokens/s.
  const rows = [
    { utilisation: 0.08, tokens_s: 40, stale: false },
    { utilisation: 0.08, tokens_s: 40, stale: false },
  ];
  assert.deepEqual(oldDoctorUtilisation(rows), { value: 0.08, answer: "yes" });
  assert.deepEqual(oldScaler(rows), { capacity: 500, target: 1, backends: 2 });
  const parts = (busy: number) => [{ part: "L0/E1", kind: "expert", busyMs: busy }];
  const share = oldHottestShare({ at: 0, slots: 1, parts: parts(0) }, {
    at: 2000,
    slots: 1,
    parts: parts(2),
  });
  assert.equal(share, 0.001);
});
