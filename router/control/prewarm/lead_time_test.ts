import assert from "node:assert/strict";
import { ColdStartBook, leadTime, nearestRank } from "./lead_time.ts";

const sample = (readyMs: number, expertLoadMs: number | null = null) => ({
  backend: `b${readyMs}`,
  at: 0,
  readyMs,
  expertLoadMs,
});

Deno.test("leadTime() without samples is the configured lead, and says so", () => {
  const lead = leadTime([], { configuredMs: 3_600_000 });
  assert.equal(lead.leadMs, 3_600_000);
  assert.equal(lead.source, "configured");
  assert.equal(lead.coldStartMs, null);
});

Deno.test("leadTime() is the percentile of ready + expert load, times 1 + margin, plus one run", () => {
  // 20 samples: ready 10..29 s, expert load 1 s each → cold starts 11..30 s.
  const samples = Array.from({ length: 20 }, (_, i) => sample((10 + i) * 1000, 1000));
  const lead = leadTime(samples, { configuredMs: 3_600_000, percentile: 0.95, margin: 0.25 });
  assert.equal(lead.source, "measured");
  assert.equal(lead.samples, 20);
  assert.equal(lead.coldStartMs, 29_000); // nearest rank 19 of 20
  assert.equal(lead.medianMs, 20_000);
  assert.equal(lead.expertLoadMs, 1000);
  assert.equal(lead.leadMs, 29_000 * 1.25 + 60_000);
  // A slow outlier moves the 95th percentile of a small sample: one of 3 is its maximum.
  const three = leadTime([sample(20_000), sample(21_000), sample(90_000)], {
    configuredMs: 0,
    margin: 0,
    runIntervalMs: 0,
  });
  assert.equal(three.leadMs, 90_000);
  assert.throws(() => leadTime([], { configuredMs: 0, percentile: 0 }), RangeError);
});

Deno.test("nearestRank() never interpolates below a sample", () => {
  assert.equal(nearestRank([1, 2, 3, 4], 0.5), 2);
  assert.equal(nearestRank([1, 2, 3, 4], 0.95), 4);
  assert.equal(nearestRank([7], 0.01), 7);
});

Deno.test("ColdStartBook keeps one sample per backend, the newest, and adds expert load later", () => {
  const book = new ColdStartBook(2);
  book.record(sample(1000));
  book.record({ ...sample(2000), backend: "b1000" });
  book.record(sample(3000));
  book.expertLoad("b3000", 500);
  assert.deepEqual(book.samples().map((s) => [s.backend, s.readyMs, s.expertLoadMs]), [
    ["b1000", 2000, null],
    ["b3000", 3000, 500],
  ]);
  book.record(sample(4000));
  assert.deepEqual(book.samples().map((s) => s.backend), ["b3000", "b4000"]);
});
