/** @module The heatmaps' colour table and cell pixels (router/operate/dashboard/static/heat_scale.js). */
import assert from "node:assert/strict";
import { cellPixels, colourTable, HEAT_COLOURS, shadeOf, SHADES } from "./static/heat_scale.js";

const rgb = (hex: string) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));

Deno.test("colourTable() runs from viridis' first sample to its last through every sample", () => {
  const table = colourTable();
  assert.equal(table.length, SHADES * 3);
  assert.deepEqual([...table.subarray(0, 3)], rgb(HEAT_COLOURS[0]!));
  assert.deepEqual([...table.subarray((SHADES - 1) * 3)], rgb(HEAT_COLOURS.at(-1)!));
  // Sample 5 of 10 sits at 5/9 of the way: shade 141.67, between 141 and 142.
  const [lo, hi] = [141, 142].map((s) => [...table.subarray(s * 3, s * 3 + 3)]);
  const want = rgb(HEAT_COLOURS[5]!);
  for (let c = 0; c < 3; c++) {
    assert.ok(Math.abs(lo![c]! - want[c]!) <= 2 && Math.abs(hi![c]! - want[c]!) <= 2, `${c}`);
  }
  // Viridis gets lighter all the way: the green channel never falls.
  for (let s = 1; s < SHADES; s++) assert.ok(table[s * 3 + 1]! >= table[(s - 1) * 3 + 1]!);
});

Deno.test("shadeOf() scales 0 … max to the table and marks missing values", () => {
  assert.equal(shadeOf(0, 10), 0);
  assert.equal(shadeOf(10, 10), SHADES - 1);
  assert.equal(shadeOf(5, 10), 128);
  assert.equal(shadeOf(20, 10), SHADES - 1);
  assert.equal(shadeOf(3, 0), 0, "an all-idle grid is dark, not an error");
  assert.equal(shadeOf(null, 10), -1);
  assert.equal(shadeOf(Number.NaN, 10), -1);
});

Deno.test("cellPixels() puts cell (row, expert) at pixel row × columns + expert", () => {
  const table = colourTable();
  const pixels = cellPixels([[0, 10, null], [5, 0, 10]], 3, 10, table);
  assert.equal(pixels.length, 2 * 3 * 4);
  const at = (
    row: number,
    x: number,
  ) => [...pixels.subarray((row * 3 + x) * 4, (row * 3 + x) * 4 + 4)];
  const shade = (s: number) => [...table.subarray(s * 3, s * 3 + 3), 255];
  assert.deepEqual(at(0, 0), shade(0));
  assert.deepEqual(at(0, 1), shade(SHADES - 1));
  assert.deepEqual(at(0, 2), [0, 0, 0, 0], "missing: transparent");
  assert.deepEqual(at(1, 0), shade(128));
  assert.deepEqual(at(1, 2), shade(SHADES - 1));
});
