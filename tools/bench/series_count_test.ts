import assert from "node:assert/strict";
import { countSeries } from "./series_count.ts";

Deno.test("series per mode: expert grows with experts, top and backend with layers only", async () => {
  const expert = await countSeries(3, 64, "expert");
  const top = await countSeries(3, 64, "top", 4);
  const backend = await countSeries(3, 64, "backend");
  assert.equal(expert.routed, 2 * 3 * 64, "tokens and executions per layer × expert");
  assert.equal(top.routed, 2 * 3 * (4 + 1), "N experts and other per layer");
  assert.equal(backend.routed, 2 * 3);
  assert.equal(expert.total - expert.routed, top.total - top.routed, "the rest is unchanged");
});
