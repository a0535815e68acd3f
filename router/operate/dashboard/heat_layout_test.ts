/** @module Geometry of the canvas heatmap (router/operate/dashboard/static/heat_layout.js). */
import assert from "node:assert/strict";
import {
  cellCentre,
  clampWindow,
  dragWindow,
  heatLayout,
  hitTest,
  overlappingLabels,
} from "./static/heat_layout.js";

/** 6 px per character: about an 11 px system font's digits. */
const measure = (text: string) => text.length * 6;
const layers = Array.from({ length: 61 }, (_, l) => l);
const WIDE = { layers, experts: 256 };
const SIZE = { width: 1384, height: 720 };
const OPTIONS = { max: 1234.5, unit: "tok/s", format: (v: number) => v.toLocaleString("en-US") };

type Label = { kind: string; text: string; x: number; y: number; w: number; h: number };

Deno.test("heatLayout() gives all 256 experts a column inside the box, labels thinned by powers of two", () => {
  const layout = heatLayout(WIDE, SIZE, measure, OPTIONS);
  const { plot } = layout;
  assert.deepEqual(layout.window, [0, 256]);
  assert.ok(plot.x > 0 && plot.x + plot.w <= SIZE.width && plot.y + plot.h <= SIZE.height);
  assert.ok(Math.abs(layout.cellW * 256 - plot.w) < 1e-9);
  assert.ok(Math.abs(layout.cellH * 61 - plot.h) < 1e-9);
  const xs = layout.labels.filter((l: Label) => l.kind === "x").map((l: Label) => Number(l.text));
  assert.equal(xs[0], 0);
  assert.ok([1, 2, 4, 8, 16, 32].includes(layout.xStep), `step ${layout.xStep}`);
  assert.deepEqual(xs, xs.map((_: number, i: number) => i * layout.xStep));
  assert.ok(xs.at(-1)! + layout.xStep >= 256, "labels run to the last expert");
  const ys = layout.labels.filter((l: Label) => l.kind === "y").map((l: Label) => l.text);
  assert.equal(ys[0], "L0");
  assert.equal(ys.length, Math.ceil(61 / layout.yStep));
});

Deno.test("heatLayout(): no two labels overlap at any width, and the legend fits", () => {
  for (const width of [320, 640, 900, 1384, 2400]) {
    for (const rows of [1, 3, 16, 61]) {
      const grid = { layers: layers.slice(0, rows), experts: 256 };
      const layout = heatLayout(grid, { width, height: 160 + rows * 9 }, measure, OPTIONS);
      assert.deepEqual(overlappingLabels(layout.labels), [], `${width} px, ${rows} rows`);
      for (const label of layout.labels as Label[]) {
        assert.ok(label.x >= 0 && label.x + label.w <= width, `${label.text} inside (${width})`);
      }
      const max = layout.labels.find((l: Label) => l.text === "1,234.5");
      assert.ok(max, "the legend names its maximum");
    }
  }
});

Deno.test("overlappingLabels() finds overlaps: unthinned labels at 256 experts do overlap", () => {
  // The check the browser test relies on, shown able to fail: one label per expert.
  const layout = heatLayout(WIDE, SIZE, measure, OPTIONS);
  const all = Array.from({ length: 256 }, (_, e) => {
    const w = measure(String(e));
    return { text: String(e), x: layout.plot.x + (e + 0.5) * layout.cellW - w / 2, y: 0, w, h: 13 };
  });
  assert.ok(overlappingLabels(all).length > 100);
});

Deno.test("hitTest() and cellCentre() agree for every cell, zoomed or not", () => {
  for (const window of [undefined, [100, 140]]) {
    const layout = heatLayout(WIDE, SIZE, measure, { ...OPTIONS, window });
    const [start, end] = layout.window;
    for (let row = 0; row < 61; row++) {
      for (let expert = start; expert < end; expert++) {
        const at = cellCentre(layout, row, expert)!;
        assert.deepEqual(hitTest(layout, at.x, at.y), { row, expert });
      }
    }
    assert.equal(hitTest(layout, layout.plot.x - 1, layout.plot.y + 1), null);
    assert.equal(hitTest(layout, layout.plot.x + 1, layout.plot.y + layout.plot.h), null);
    assert.equal(cellCentre(layout, 0, end), null);
  }
});

Deno.test("zoom: a drag selects the experts under it, a click selects nothing", () => {
  const layout = heatLayout(WIDE, SIZE, measure, OPTIONS);
  const x = (expert: number) => layout.plot.x + expert * layout.cellW;
  assert.deepEqual(dragWindow(layout, x(200) + 1, x(10) + 1), [10, 201]);
  assert.equal(dragWindow(layout, x(5) + 1, x(5) + 2), null);
  const zoomed = heatLayout(WIDE, SIZE, measure, { ...OPTIONS, window: [10, 201] });
  assert.equal(zoomed.labels.find((l: Label) => l.kind === "name")!.text, "expert (10–200 of 256)");
  assert.equal(zoomed.labels.find((l: Label) => l.kind === "x")!.text, "16");
  assert.deepEqual(clampWindow([-5, 999], 256), [0, 256]);
  assert.deepEqual(clampWindow([300, 400], 256), [255, 256]);
  assert.deepEqual(clampWindow(undefined, 0), [0, 0]);
});
