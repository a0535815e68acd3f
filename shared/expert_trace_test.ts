import assert from "node:assert/strict";
import fc from "fast-check";
import {
  decodeBatchSizes,
  decodeExpertCounts,
  encodeBatchSizes,
  encodeExpertCounts,
  expertCountsFromIds,
} from "./expert_trace.ts";

const layersArb = fc.array(
  fc.array(fc.tuple(fc.nat({ max: 100_000 }), fc.integer({ min: 1, max: 1_000_000 })), {
    maxLength: 40,
  }).map((entries) => new Map(entries)),
  { maxLength: 12 },
);

Deno.test("encodeExpertCounts() writes layers in order and experts sorted by id", () => {
  const text = encodeExpertCounts([new Map([[7, 3], [3, 5]]), new Map([[30, 4], [1, 4]])]);
  assert.equal(text, "3*5,7*3;1*4,30*4");
});

Deno.test("encodeExpertCounts() writes an empty layer as '-' and leaves out zero counts", () => {
  assert.equal(encodeExpertCounts([]), "");
  assert.equal(encodeExpertCounts([new Map()]), "-");
  assert.equal(encodeExpertCounts([new Map([[2, 0]]), new Map([[1, 1]])]), "-;1*1");
});

Deno.test("decodeExpertCounts() round-trips every list of layers", () => {
  fc.assert(fc.property(layersArb, (layers) => {
    const decoded = decodeExpertCounts(encodeExpertCounts(layers));
    assert.ok(decoded !== undefined);
    assert.equal(decoded.length, layers.length);
    decoded.forEach((counts, i) => assert.deepEqual(counts, layers[i]));
  }));
});

Deno.test("decodeExpertCounts() answers undefined for malformed text", () => {
  for (
    const bad of [
      "3",
      "3*",
      "*3",
      "3*0",
      "3*5,3*1",
      "a*1",
      "1*1;;2*2",
      "1*1,",
      "-1*2",
      "1.5*2",
      "1*2 ",
      "1*9999999999",
    ]
  ) {
    assert.equal(decodeExpertCounts(bad), undefined, bad);
  }
});

Deno.test("decodeExpertCounts() never throws on arbitrary strings", () => {
  fc.assert(fc.property(fc.string(), (text) => {
    const decoded = decodeExpertCounts(text);
    if (decoded !== undefined) {
      assert.equal(encodeExpertCounts(decoded).length <= text.length, true);
    }
  }));
});

Deno.test("batch sizes round-trip and malformed text is refused", () => {
  fc.assert(fc.property(fc.array(fc.nat({ max: 1_000_000 })), (sizes) => {
    assert.deepEqual(decodeBatchSizes(encodeBatchSizes(sizes)), sizes);
  }));
  assert.equal(encodeBatchSizes([4, 6]), "4;6");
  for (const bad of ["4;", "x", "4;-1", "4,6", "1.5"]) {
    assert.equal(decodeBatchSizes(bad), undefined, bad);
  }
});

Deno.test("expertCountsFromIds() counts selections per layer", () => {
  // [layers 2, rows 3, topK 2]
  const ids = Int32Array.of(3, 7, 3, 7, 3, 1, 0, 0, 2, 0, 2, -1);
  const counts = expertCountsFromIds(ids, { layers: 2, rows: 3, topK: 2 });
  assert.deepEqual(counts, [new Map([[3, 3], [7, 2], [1, 1]]), new Map([[0, 3], [2, 2]])]);
  assert.equal(encodeExpertCounts(counts), "1*1,3*3,7*2;0*3,2*2");
});
