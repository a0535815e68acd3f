import assert from "node:assert/strict";
import { LAYER_IO } from "./compose_layer.ts";
import { assembleLayerBatch, type LayerWork } from "./layer_batch.ts";

const W = 2;
/** Rows whose values name them: row r of work w is [10·w + r, −(10·w + r)]. */
function work(
  w: number,
  rows: number,
  entry: number,
  assign: [number, number, number][],
): LayerWork {
  const values = new Float32Array(rows * W);
  for (let r = 0; r < rows; r++) values.set([10 * w + r, -(10 * w + r)], r * W);
  return {
    rows: values,
    rowCount: rows,
    entry,
    residual: null,
    assign: {
      row: Int32Array.from(assign, (a) => a[0]),
      expert: Int32Array.from(assign, (a) => a[1]),
      weight: Float32Array.from(assign, (a) => a[2]),
    },
  };
}

// The executable hosts experts 5, 2 and 7, in that order.
const position = Int32Array.from({ length: 8 }, (_, e) => [5, 2, 7].indexOf(e));

Deno.test("assembleLayerBatch() puts entry rows first, peer rows after, assignments by hosting order", () => {
  const works = [
    work(1, 3, 2, [[0, 7, 0.5], [2, 5, 1], [1, 2, 0.25]]),
    work(2, 2, 0, [[1, 2, 0.75], [0, 7, 1]]),
    work(3, 1, 1, [[0, 5, 0.125]]),
  ];
  const batch = assembleLayerBatch(works, { width: W, position, hosted: 3, fusedGate: true });
  assert.equal(batch.entryRows, 3);
  assert.equal(batch.totalRows, 6);
  const rows = batch.feeds[LAYER_IO.rows]!.data as Float32Array;
  // Entry rows: work 1 rows 0–1, work 3 row 0; then peer rows: work 1 row 2, work 2 rows 0–1.
  assert.deepEqual([...rows].filter((_, i) => i % 2 === 0), [10, 11, 30, 12, 20, 21]);
  assert.deepEqual([...batch.feeds[LAYER_IO.residual]!.data], [10, -10, 11, -11, 30, -30]);
  assert.deepEqual([...batch.counts], [2, 2, 2]);
  // Expert 5: work 1 row 2 (global 3), work 3 row 0 (global 2); expert 2: …; expert 7: …
  assert.deepEqual([...batch.feeds[LAYER_IO.src]!.data], [3, 2, 1, 5, 0, 4]);
  assert.deepEqual([...batch.feeds[LAYER_IO.weight]!.data], [1, 0.125, 0.25, 0.75, 0.5, 1]);
  assert.deepEqual(batch.outputs, [LAYER_IO.hidden, LAYER_IO.routed, LAYER_IO.logits]);
  // Splitting hands each work its own rows back.
  const hidden = Float32Array.from({ length: 3 * W }, (_, i) => i);
  const routed = Float32Array.from({ length: 6 * W }, (_, i) => 100 + i);
  const logits = Float32Array.from({ length: 3 * 4 }, (_, i) => 200 + i);
  const [a, b, c] = batch.split({
    [LAYER_IO.hidden]: hidden,
    [LAYER_IO.routed]: routed,
    [LAYER_IO.logits]: logits,
  });
  assert.deepEqual([...a!.hidden], [0, 1, 2, 3]);
  assert.deepEqual([...a!.logits!], [200, 201, 202, 203, 204, 205, 206, 207]);
  assert.deepEqual([...a!.routed], [106, 107]);
  assert.deepEqual([...b!.hidden], []);
  assert.deepEqual([...b!.routed], [108, 109, 110, 111]);
  assert.deepEqual([...c!.hidden], [4, 5]);
  assert.deepEqual([...c!.routed], []);
});

Deno.test("assembleLayerBatch() passes a single work's rows through and uses its residual", () => {
  const single = work(4, 2, 2, [[1, 2, 1]]);
  single.residual = Float32Array.of(1, 2, 3, 4);
  const batch = assembleLayerBatch([single], { width: W, position, hosted: 3, fusedGate: false });
  assert.equal(batch.feeds[LAYER_IO.rows]!.data, single.rows);
  assert.equal(batch.feeds[LAYER_IO.residual]!.data, single.residual);
  assert.deepEqual([...batch.counts], [0, 1, 0]);
  assert.deepEqual(batch.outputs, [LAYER_IO.hidden]);
});

Deno.test("assembleLayerBatch() refuses an expert the executable does not host", () => {
  assert.throws(
    () =>
      assembleLayerBatch([work(1, 1, 1, [[0, 3, 1]])], {
        width: W,
        position,
        hosted: 3,
        fusedGate: false,
      }),
    /expert 3 is not hosted by this executable/,
  );
});
