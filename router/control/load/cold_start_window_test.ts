import assert from "node:assert/strict";
import fc from "fast-check";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";
import { coldStartTotal, recentColdStartsPerMin, rememberColdStarts } from "./cold_start_window.ts";

Deno.test("coldStartTotal sums the routed experts' cold starts; undefined when none reports them", () => {
  const report = fakeLoadReport({ at: 0 });
  assert.equal(coldStartTotal(report), undefined);
  report.parts[1]!.coldStarts = 3;
  report.parts[2]!.coldStarts = 4;
  assert.equal(coldStartTotal(report), 7);
  assert.equal(coldStartTotal(undefined), undefined);
});

Deno.test("recentColdStartsPerMin: hand-computed over a 60 s window", () => {
  let history = rememberColdStarts(new Map(), [{ id: "b", at: 0, total: 10 }]);
  assert.equal(recentColdStartsPerMin(history.get("b")), undefined);
  // 30 s later 5 more: 5 per 30 s = 10/min.
  history = rememberColdStarts(history, [{ id: "b", at: 30_000, total: 15 }]);
  assert.equal(recentColdStartsPerMin(history.get("b")), 10);
  // At 90 s (total 18): the baseline is the entry at 30 s (newest at or before 30 s): 3/min.
  history = rememberColdStarts(history, [{ id: "b", at: 90_000, total: 18 }]);
  assert.deepEqual(history.get("b")!.map((e) => e.at), [30_000, 90_000]);
  assert.equal(recentColdStartsPerMin(history.get("b")), 3);
  // A restart (total goes back) starts again; a repeated timestamp is ignored.
  history = rememberColdStarts(history, [{ id: "b", at: 95_000, total: 2 }]);
  history = rememberColdStarts(history, [{ id: "b", at: 95_000, total: 9 }]);
  assert.deepEqual(history.get("b"), [{ at: 95_000, total: 2 }]);
  // Backends without cold-start counters are not kept.
  assert.equal(rememberColdStarts(history, [{ id: "x", at: 1, total: undefined }]).has("x"), false);
});

Deno.test("the recent rate never exceeds what grew over the kept span (property)", () => {
  fc.assert(fc.property(
    fc.array(fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 0, max: 20 })), {
      minLength: 2,
      maxLength: 80,
    }),
    (steps) => {
      let history = new Map() as ReturnType<typeof rememberColdStarts>;
      let at = 0;
      let total = 0;
      for (const [dt, more] of steps) {
        at += dt;
        total += more;
        history = rememberColdStarts(history, [{ id: "b", at, total }]);
      }
      const entries = history.get("b")!;
      // The kept list spans at most one entry beyond the window.
      assert.ok(entries.filter((e) => e.at <= at - 60_000).length <= 1);
      const rate = recentColdStartsPerMin(entries);
      if (rate === undefined) return entries.length < 2;
      const first = entries[0]!;
      return rate >= 0 && rate * (at - first.at) / 60_000 <= total - first.total + 1e-9;
    },
  ));
});
