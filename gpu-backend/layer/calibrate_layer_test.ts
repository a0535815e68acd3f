/** The layer calibration measures a real composed execution and fits it over work rows. */
import assert from "node:assert/strict";
import { generateModel } from "../../tools/model/generate.ts";
import { TINY_MODEL, withTempDir } from "../../tools/model/test_helpers.ts";
import { calibrateLayerFromOrt } from "./calibrate_layer.ts";

Deno.test("calibrateLayerFromOrt() fits a non-negative timing over experts touched and work rows", async () => {
  await withTempDir(async (dir) => {
    // 8 experts, top-2, 1 shared, d_ff 32: a fused gate row is 8 / 64 of an expert row.
    const manifest = await generateModel(dir, TINY_MODEL);
    const calibration = await calibrateLayerFromOrt(dir, manifest, {
      hosted: 4,
      batches: [1, 8, 32],
      repeats: 3,
    });
    // Spreads [top_k 2, 4·top_k capped at hosted 4]: 2 then up to 4 experts get rows.
    assert.deepEqual(
      calibration.samples.map((s) => [s.experts, s.rows]),
      [[2, 1], [2, 8], [2, 32], [2, 1], [4, 8], [4, 32]].map(([e, m]) => [e, m! * 3.125]),
    );
    assert.ok(calibration.samples.every((s) => s.ms > 0), JSON.stringify(calibration.samples));
    const { fixedMs, perExpertMs, perRowMs } = calibration;
    assert.ok(fixedMs >= 0 && perExpertMs >= 0 && perRowMs >= 0);
    assert.ok(fixedMs + perExpertMs + perRowMs > 0, "real work costs time");
    assert.equal(calibration.hosted, 4);
    assert.match(
      calibration.method,
      /^measured: onnxruntime CPU session, 1 thread, layer 0 composed with 4 of 8 experts \+ 1 shared \+ next gate/,
    );
    // The last layer has no next gate to fuse.
    const last = await calibrateLayerFromOrt(dir, manifest, { layer: 1, batches: [2], repeats: 1 });
    assert.deepEqual(last.samples.map((s) => s.rows), [2 * 3, 2 * 3]);
    await assert.rejects(calibrateLayerFromOrt(dir, manifest, { hosted: 1 }), /hosted must be/);
    await assert.rejects(calibrateLayerFromOrt(dir, manifest, { batches: [0] }), /batches/);
    await assert.rejects(calibrateLayerFromOrt(dir, manifest, { spreads: [1] }), /spreads/);
    await assert.rejects(calibrateLayerFromOrt(dir, manifest, { layer: 2 }), /2 layer\(s\)/);
  });
});
