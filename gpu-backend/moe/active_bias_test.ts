import assert from "node:assert/strict";
import { parseRoutingBias, summarizeRoutingBias } from "./active_bias.ts";

const shape = { layers: 2, experts: 3 };

Deno.test("parseRoutingBias() converts a layers × experts bias and null to none", () => {
  const bias = parseRoutingBias([[0.5, -1, 0], [0, 0, 2.25]], shape)!;
  assert.deepEqual(bias.map((layer) => [...layer]), [[0.5, -1, 0], [0, 0, 2.25]]);
  assert.equal(parseRoutingBias(null, shape), undefined);
  assert.deepEqual(summarizeRoutingBias(bias), { active: true, max_abs: [1, 2.25] });
  assert.deepEqual(summarizeRoutingBias(undefined), { active: false, max_abs: [] });
});

Deno.test("parseRoutingBias() names the field that is wrong", () => {
  assert.throws(() => parseRoutingBias({}, shape), /bias must be an array of layers or null/);
  assert.throws(() => parseRoutingBias([[0, 0, 0]], shape), /bias has 1 layers, the model has 2/);
  assert.throws(
    () => parseRoutingBias([[0, 0, 0], [0, 0]], shape),
    /bias\[1\] has 2 experts, the model has 3/,
  );
  assert.throws(() => parseRoutingBias([[0, 0, 0], 5], shape), /bias\[1\] must be an array/);
  assert.throws(
    () => parseRoutingBias([[0, NaN, 0], [0, 0, 0]], shape),
    /bias\[0\]\[1\] must be a finite number, got NaN/,
  );
  assert.throws(
    () => parseRoutingBias([[0, 0, 0], [0, 0, "1"]], shape),
    /bias\[1\]\[2\] must be a finite number, got "1"/,
  );
  assert.throws(
    () => parseRoutingBias([[0, 0, 1e300], [0, 0, 0]], shape),
    /bias\[0\]\[2\] must be a finite number, got 1e\+300/,
  );
});
