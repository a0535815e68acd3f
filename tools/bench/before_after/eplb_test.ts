import assert from "node:assert/strict";
import { eplbPhy2log } from "./eplb.ts";

Deno.test("eplbPhy2log() fills every slot, places every expert and replicates the hot one", () => {
  // 8 experts, expert 5 carries most of the load; 2 backends × 6 slots.
  const weight = [[1, 1, 1, 1, 1, 40, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2]];
  const placed = eplbPhy2log(weight, { backends: 2, slotsPerBackend: 6, groups: 2 })!;
  assert.equal(placed.phy2log.length, 2);
  for (const row of placed.phy2log) {
    assert.equal(row.length, 12);
    assert.deepEqual(new Set(row).size, 8, "every expert at least once");
  }
  const copies = placed.phy2log[0]!.filter((e) => e === 5).length;
  assert.ok(copies >= 4, `the hot expert has ${copies} replicas`);
  // Its replicas are split over both backends.
  assert.ok(placed.phy2log[0]!.slice(0, 6).includes(5) && placed.phy2log[0]!.slice(6).includes(5));
  assert.ok(placed.balancedness > 0.8 && placed.balancedness <= 1);
});

Deno.test("eplbPhy2log() plans nothing on a window without load", () => {
  assert.equal(eplbPhy2log([[0, 0, 0, 0]], { backends: 2, slotsPerBackend: 2, groups: 1 }), null);
});
