import assert from "node:assert/strict";
import { perSecond, toCsv } from "./series.ts";

Deno.test("perSecond() buckets completions, counting the good ones against the SLO", () => {
  const rows = perSecond([[0.2, 10, 2], [0.9, 30, 1], [2.5, 5, 4]], 3, 20);
  assert.deepEqual(
    rows.map((r) => [r.t, r.requestsPerS, r.tokensPerS, r.goodPerS, r.p50, r.p99, r.mean]),
    [
      [0, 2, 3, 1, 10, 30, 20],
      [1, 0, 0, 0, NaN, NaN, NaN],
      [2, 1, 4, 1, 5, 5, 5],
    ],
  );
});

Deno.test("toCsv() writes comment lines, the columns, and NaN as an empty cell", () => {
  assert.equal(
    toCsv(["t", "p50"], [[0, 10], [1, NaN]], ["Command: `x`", ""]),
    "# Command: `x`\n#\nt,p50\n0,10\n1,\n",
  );
});
