import assert from "node:assert/strict";
import { createRandom } from "../../tools/model/prng.ts";
import { InputRecorder } from "./input_recorder.ts";

/** `rows` rows of `width` floats, every float of row `i` equal to `first + i`. */
function numberedRows(first: number, rows: number, width: number): Float32Array {
  return Float32Array.from({ length: rows * width }, (_, i) => first + Math.floor(i / width));
}

Deno.test("InputRecorder keeps every row until full, as copies", () => {
  const recorder = new InputRecorder({ width: 3, capacity: 5, random: createRandom(1) });
  const tokens = numberedRows(0, 2, 3);
  recorder.offer(tokens, 2);
  tokens.fill(-1); // the caller may reuse its buffer
  recorder.offer(numberedRows(2, 2, 3), 2);
  const snapshot = recorder.snapshot();
  assert.equal(snapshot.rows, 4);
  assert.deepEqual([...snapshot.tokens], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
  assert.equal(recorder.seen, 4);
});

Deno.test("InputRecorder stays bounded and holds only whole offered rows", () => {
  const recorder = new InputRecorder({ width: 4, capacity: 16, random: createRandom(2) });
  let next = 0;
  for (let request = 0; request < 200; request++) {
    const rows = 1 + (request % 7);
    recorder.offer(numberedRows(next, rows, 4), rows);
    next += rows;
  }
  assert.equal(recorder.seen, next);
  assert.equal(recorder.size, 16);
  const { tokens, rows } = recorder.snapshot();
  assert.equal(rows, 16);
  assert.equal(tokens.length, 16 * 4);
  const ids = new Set<number>();
  for (let row = 0; row < rows; row++) {
    const id = tokens[row * 4]!;
    assert.ok(Number.isInteger(id) && id >= 0 && id < next, `row ${row} holds ${id}`);
    for (let i = 1; i < 4; i++) assert.equal(tokens[row * 4 + i], id);
    ids.add(id);
  }
  assert.equal(ids.size, 16, "no row is kept twice");
});

Deno.test("InputRecorder includes early and late rows alike (uniform sample)", () => {
  // 400 rows through a 40-row reservoir, 500 seeded trials: each row is kept with
  // probability 0.1, so each tenth of the stream holds ~4 rows of the sample on average.
  const stream = 400;
  const capacity = 40;
  const trials = 500;
  const perTenth = new Array<number>(10).fill(0);
  const random = createRandom(3);
  for (let trial = 0; trial < trials; trial++) {
    const recorder = new InputRecorder({ width: 1, capacity, random });
    for (let first = 0; first < stream; first += 8) recorder.offer(numberedRows(first, 8, 1), 8);
    for (const id of recorder.snapshot().tokens) perTenth[Math.floor(id / (stream / 10))]!++;
  }
  const expected = (trials * capacity) / 10; // 2000 per tenth
  for (const [tenth, count] of perTenth.entries()) {
    // Binomial-ish std ≈ 42; 6 % is over 2.5 std and still rejects any skew toward
    // early rows (a "keep the first rows" recorder gives 20000 vs 0).
    assert.ok(Math.abs(count - expected) <= 0.06 * expected, `tenth ${tenth}: ${count}`);
  }
});

Deno.test("InputRecorder rejects a bad width, capacity or token length, naming them", () => {
  assert.throws(() => new InputRecorder({ width: 0 }), /width must be an integer >= 1, got 0/);
  assert.throws(
    () => new InputRecorder({ width: 2, capacity: 1.5 }),
    /capacity must be an integer >= 1, got 1.5/,
  );
  const recorder = new InputRecorder({ width: 2 });
  assert.throws(
    () => recorder.offer(new Float32Array(5), 3),
    /tokens length 5 is not rows \* width = 6/,
  );
  recorder.offer(new Float32Array(4), 2);
  recorder.clear();
  assert.equal(recorder.size, 0);
  assert.equal(recorder.snapshot().rows, 0);
});
