/**
 * @module The heatmaps' colour scale and label thinning, shared by the canvas heatmap
 * (`heat_canvas.js`) and the ECharts detail charts (`charts.js`). Pure: no DOM.
 *
 * Colours: viridis (matplotlib's perceptually uniform sequential map: dark = idle,
 * yellow = hottest; no middle colour reads as "no data"), interpolated linearly between
 * ten samples into a 256-entry lookup table.
 */

/** Viridis, sampled at 10 points. */
export const HEAT_COLOURS = [
  "#440154",
  "#482878",
  "#3e4989",
  "#31688e",
  "#26828e",
  "#1f9e89",
  "#35b779",
  "#6ece58",
  "#b5de2b",
  "#fde725",
];

/** Entries in {@linkcode colourTable}. */
export const SHADES = 256;

function rgbOf(hex) {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/**
 * `SHADES` RGB triples (flat `Uint8Array`, 3 bytes each) running through `stops`
 * (hex colours, evenly spaced): entry 0 is the first stop, entry `SHADES - 1` the last.
 */
export function colourTable(stops = HEAT_COLOURS) {
  const rgb = stops.map(rgbOf);
  const table = new Uint8Array(SHADES * 3);
  for (let i = 0; i < SHADES; i++) {
    const at = (i / (SHADES - 1)) * (rgb.length - 1);
    const lo = Math.min(rgb.length - 2, Math.floor(at));
    const t = at - lo;
    for (let c = 0; c < 3; c++) {
      table[i * 3 + c] = Math.round(rgb[lo][c] * (1 - t) + rgb[lo + 1][c] * t);
    }
  }
  return table;
}

/** The shade (0 … SHADES − 1) of `value` on a 0 … `max` scale; missing → -1. */
export function shadeOf(value, max) {
  if (typeof value !== "number" || !Number.isFinite(value)) return -1;
  if (!(max > 0)) return 0;
  const scaled = Math.round((value / max) * (SHADES - 1));
  return Math.max(0, Math.min(SHADES - 1, scaled));
}

/**
 * RGBA pixels of a `rows.length` × `columns` grid, one pixel per cell, row-major (for an
 * `ImageData` of width `columns`): each cell's shade from `table`; a missing value is
 * transparent.
 */
export function cellPixels(rows, columns, max, table = colourTable()) {
  const pixels = new Uint8ClampedArray(rows.length * columns * 4);
  for (let y = 0; y < rows.length; y++) {
    const row = rows[y];
    for (let x = 0; x < columns; x++) {
      const shade = shadeOf(row[x], max);
      if (shade < 0) continue;
      const p = (y * columns + x) * 4;
      pixels[p] = table[shade * 3];
      pixels[p + 1] = table[shade * 3 + 1];
      pixels[p + 2] = table[shade * 3 + 2];
      pixels[p + 3] = 255;
    }
  }
  return pixels;
}

/**
 * Label every `step`-th category so labels keep `minPx` apart along `lengthPx`: 1, 2, 4,
 * 8, 16… (round numbers: 0, 16, 32, … at 256 experts).
 */
export function labelStep(count, lengthPx, minPx) {
  let step = 1;
  while (step < count && (lengthPx / count) * step < minPx) step *= 2;
  return step;
}
