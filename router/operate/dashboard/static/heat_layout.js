/**
 * @module Geometry of the canvas heatmap (layers × experts): where the plot, the cells,
 * the thinned axis labels and the colour legend go in a `width × height` box, which cell
 * a point hits, and where a cell's centre is. Pure: text widths come from an injected
 * `measure(text)`, so it is unit-tested without a browser (`heat_layout_test.ts`).
 *
 * Every expert of the window (all of them unless zoomed) gets a column; labels are
 * thinned by powers of two (`labelStep`) with a spacing wider than the widest label, so
 * no two overlap; the legend's width is measured from its own text, so it always fits.
 */
import { labelStep } from "./heat_scale.js";

/** Height of one line of label text (11 px font), px. */
export const LABEL_H = 13;
const GAP = 4;
const TOP = 8;
const LEGEND_GAP = 16;
const LEGEND_BAR = 12;

/**
 * @param grid `{ layers: number[], experts: number }` (layer numbers, top to bottom)
 * @param size `{ width, height }` of the canvas in CSS px
 * @param measure `(text) => width` in CSS px at the label font
 * @param options `{ window: [start, end), max, unit, format(value) }`
 */
export function heatLayout(grid, size, measure, options = {}) {
  const experts = Math.max(0, grid.experts);
  const [start, end] = clampWindow(options.window, experts);
  const columns = end - start;
  const rows = grid.layers.length;
  const yTexts = grid.layers.map((l) => `L${l}`);
  const yWidth = Math.max(0, ...yTexts.map(measure));
  const unit = options.unit ?? "tok/s";
  const maxText = (options.format ?? String)(options.max ?? 0);
  const legendText = Math.max(measure(unit), measure(maxText), measure("0"));
  const left = Math.ceil(GAP + yWidth + 6);
  const right = Math.ceil(LEGEND_GAP + LEGEND_BAR + 6 + legendText + GAP);
  const bottom = GAP + LABEL_H + GAP + LABEL_H + GAP;
  const plot = {
    x: left,
    y: TOP,
    w: Math.max(1, Math.floor(size.width - left - right)),
    h: Math.max(1, Math.floor(size.height - TOP - bottom)),
  };
  const cellW = columns > 0 ? plot.w / columns : plot.w;
  const cellH = rows > 0 ? plot.h / rows : plot.h;
  const labels = [];
  // x: every `xStep`-th expert, at multiples of the step (0, 16, 32, …).
  const widest = Math.max(measure(String(Math.max(0, end - 1))), measure("0"));
  const xStep = labelStep(columns, plot.w, Math.max(28, widest + 6));
  const ticks = [];
  for (let e = Math.ceil(start / xStep) * xStep; e < end; e += xStep) {
    const text = String(e);
    const w = measure(text);
    const cx = plot.x + (e - start + 0.5) * cellW;
    ticks.push(cx);
    labels.push({ kind: "x", text, x: cx - w / 2, y: plot.y + plot.h + GAP, w, h: LABEL_H });
  }
  // y: every `yStep`-th layer, right-aligned left of the plot.
  const yStep = labelStep(rows, plot.h, LABEL_H + 2);
  for (let r = 0; r < rows; r += yStep) {
    const w = measure(yTexts[r]);
    const cy = plot.y + (r + 0.5) * cellH;
    labels.push({
      kind: "y",
      text: yTexts[r],
      x: plot.x - 6 - w,
      y: cy - LABEL_H / 2,
      w,
      h: LABEL_H,
    });
  }
  // Axis name, centred under the x labels.
  const name = columns === experts ? "expert" : `expert (${start}–${end - 1} of ${experts})`;
  const nameW = measure(name);
  labels.push({
    kind: "name",
    text: name,
    x: plot.x + plot.w / 2 - nameW / 2,
    y: plot.y + plot.h + GAP + LABEL_H + GAP,
    w: nameW,
    h: LABEL_H,
  });
  // Legend: unit on top, the bar (max at its top, 0 at its bottom), values beside it.
  const barX = plot.x + plot.w + LEGEND_GAP;
  const barTop = plot.y + LABEL_H + GAP;
  const bar = { x: barX, y: barTop, w: LEGEND_BAR, h: Math.max(1, plot.y + plot.h - barTop) };
  const textX = barX + LEGEND_BAR + 6;
  labels.push({ kind: "legend", text: unit, x: barX, y: plot.y, w: measure(unit), h: LABEL_H });
  labels.push({
    kind: "legend",
    text: maxText,
    x: textX,
    y: bar.y,
    w: measure(maxText),
    h: LABEL_H,
  });
  if (bar.h >= 2 * LABEL_H) {
    labels.push({
      kind: "legend",
      text: "0",
      x: textX,
      y: bar.y + bar.h - LABEL_H,
      w: measure("0"),
      h: LABEL_H,
    });
  }
  return { plot, cellW, cellH, window: [start, end], rows, xStep, yStep, ticks, labels, bar };
}

/** `[start, end)` within `0 … experts`, at least one expert wide; the whole range by default. */
export function clampWindow(window, experts) {
  if (!Array.isArray(window)) return [0, experts];
  const start = Math.max(0, Math.min(experts - 1, Math.floor(window[0])));
  const end = Math.max(start + 1, Math.min(experts, Math.ceil(window[1])));
  return experts > 0 ? [start, end] : [0, 0];
}

/** The cell under `(x, y)` (CSS px in the canvas): `{ row, expert }`, or null outside. */
export function hitTest(layout, x, y) {
  const { plot, cellW, cellH, window, rows } = layout;
  if (x < plot.x || y < plot.y || x >= plot.x + plot.w || y >= plot.y + plot.h) return null;
  const column = Math.floor((x - plot.x) / cellW);
  const row = Math.floor((y - plot.y) / cellH);
  if (row < 0 || row >= rows || column < 0 || column >= window[1] - window[0]) return null;
  return { row, expert: window[0] + column };
}

/** The centre of cell (row, expert) in CSS px of the canvas, or null when not shown. */
export function cellCentre(layout, row, expert) {
  const { plot, cellW, cellH, window, rows } = layout;
  if (row < 0 || row >= rows || expert < window[0] || expert >= window[1]) return null;
  return { x: plot.x + (expert - window[0] + 0.5) * cellW, y: plot.y + (row + 0.5) * cellH };
}

/** The expert window a drag from `x0` to `x1` (CSS px) selects, or null for a click. */
export function dragWindow(layout, x0, x1) {
  const { plot, cellW, window } = layout;
  const at = (x) => window[0] + Math.max(0, Math.min(window[1] - window[0], (x - plot.x) / cellW));
  const [a, b] = [at(Math.min(x0, x1)), at(Math.max(x0, x1))];
  const start = Math.floor(a);
  const end = Math.ceil(b);
  return end - start >= 2 ? [start, end] : null;
}

/** Pairs of labels whose boxes overlap by more than half a pixel each way. */
export function overlappingLabels(labels) {
  const found = [];
  for (let i = 0; i < labels.length; i++) {
    for (let j = i + 1; j < labels.length; j++) {
      const [a, b] = [labels[i], labels[j]];
      const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (w > 0.5 && h > 0.5) found.push([a.text, b.text]);
    }
  }
  return found;
}
