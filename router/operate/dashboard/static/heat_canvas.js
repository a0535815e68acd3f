/**
 * @module The main layers × experts heatmap, drawn on a plain `<canvas>`: one
 * `ImageData` of one pixel per cell (viridis shades from `heat_scale.js`), scaled to the
 * plot without smoothing, then the thinned labels and the colour legend
 * (`heat_layout.js`). A redraw costs a few milliseconds at 61 × 256, so the first paint
 * does not wait for a chart library and live updates redraw the whole grid.
 *
 * Hovering shows layer, expert and value (a hit test on the layout; text only, never
 * HTML); the tooltip stays through live redraws, showing the new value. Dragging across
 * the plot zooms to those experts, a double-click shows all of them again: every expert
 * is shown by default.
 *
 * `model()` returns what was last drawn (values, window, layout, label boxes) for tests.
 */
import { cellCentre, dragWindow, heatLayout, hitTest } from "./heat_layout.js";
import { cellPixels, colourTable, SHADES } from "./heat_scale.js";
import { formatNumber } from "./page_model.js";

const FONT = "11px system-ui, sans-serif";
const TEXT = "#374151";
const TABLE = colourTable();

export class HeatCanvas {
  /**
   * @param container the element to fill (its height is set by the page)
   * @param options `{ unit, onPaint(ms) }`: `onPaint` gets `performance.now()` once the
   *   browser has painted a frame with the grid, after each draw with data
   */
  constructor(container, options = {}) {
    this.container = container;
    this.unit = options.unit ?? "tok/s";
    this.onPaint = options.onPaint;
    container.style.position = "relative";
    this.canvas = document.createElement("canvas");
    this.canvas.style.display = "block";
    this.tip = document.createElement("div");
    this.tip.className = "heat-tip";
    this.tip.hidden = true;
    this.band = document.createElement("div");
    this.band.className = "heat-band";
    this.band.hidden = true;
    container.replaceChildren(this.canvas, this.tip, this.band);
    this.bitmap = document.createElement("canvas");
    this.grid = { model: null, layers: [], experts: 0, rows: [], max: 0 };
    this.window = null;
    this.layout = null;
    this.dragFrom = null;
    /** Where the pointer hovers (canvas px), or null: the tooltip is redrawn there. */
    this.hover = null;
    this.#listen();
  }

  /** Draws `grid` (`{ layers, experts, rows, max }`, rows in layer order). */
  draw(grid) {
    this.grid = grid;
    this.#paint();
  }

  /** Re-lays out to the container's size. */
  resize() {
    this.#paint();
  }

  /** Shows experts `[start, end)` only, or all of them with no argument. */
  zoom(window) {
    this.window = window ?? null;
    this.#paint();
  }

  /** What is drawn: values, window, layout and label boxes (CSS px of the canvas). */
  model() {
    const layout = this.layout;
    return {
      layers: this.grid.layers,
      experts: this.grid.experts,
      rows: this.grid.rows,
      max: this.grid.max,
      window: layout?.window ?? [0, 0],
      plot: layout?.plot ?? null,
      labels: layout?.labels ?? [],
      pixelRatio: this.canvas.width / Math.max(1, this.canvas.clientWidth),
    };
  }

  /** Centre of cell (row, expert) in viewport px, or null when it is not shown. */
  cellCentreOnPage(row, expert) {
    const at = this.layout && cellCentre(this.layout, row, expert);
    if (!at) return null;
    const box = this.canvas.getBoundingClientRect();
    return { x: box.left + at.x, y: box.top + at.y };
  }

  /** RGB of shade `value` on the current scale (what a cell with that value shows). */
  colourOf(value) {
    const max = this.grid.max;
    const shade = max > 0 ? Math.round(Math.max(0, Math.min(1, value / max)) * (SHADES - 1)) : 0;
    return Array.from(TABLE.subarray(shade * 3, shade * 3 + 3));
  }

  #paint() {
    const width = this.container.clientWidth;
    const height = this.container.clientHeight;
    const ratio = globalThis.devicePixelRatio || 1;
    const [pw, ph] = [Math.round(width * ratio), Math.round(height * ratio)];
    if (this.canvas.width !== pw || this.canvas.height !== ph) {
      this.canvas.width = pw;
      this.canvas.height = ph;
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = FONT;
    const { layers, experts, rows, max } = this.grid;
    const format = (v) => formatNumber(v, 1);
    const layout = heatLayout(
      { layers, experts },
      { width, height },
      (text) => ctx.measureText(text).width,
      { window: this.window, max, unit: this.unit, format },
    );
    this.layout = layout;
    const [start, end] = layout.window;
    const { plot } = layout;
    if (rows.length === 0 || end <= start) {
      ctx.fillStyle = TEXT;
      ctx.fillText("No load yet.", plot.x, plot.y + 12);
      return;
    }
    // Cells: one pixel each, scaled up without smoothing.
    const shown = start === 0 && end === experts ? rows : rows.map((r) => r.slice(start, end));
    const columns = end - start;
    this.bitmap.width = columns;
    this.bitmap.height = rows.length;
    const pixels = cellPixels(shown, columns, max, TABLE);
    this.bitmap.getContext("2d").putImageData(new ImageData(pixels, columns, rows.length), 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(this.bitmap, plot.x, plot.y, plot.w, plot.h);
    // Ticks and labels.
    ctx.strokeStyle = TEXT;
    ctx.beginPath();
    for (const x of layout.ticks) {
      ctx.moveTo(Math.round(x) + 0.5, plot.y + plot.h);
      ctx.lineTo(Math.round(x) + 0.5, plot.y + plot.h + 3);
    }
    ctx.stroke();
    ctx.fillStyle = TEXT;
    ctx.textBaseline = "top";
    for (const label of layout.labels) ctx.fillText(label.text, label.x, label.y + 1);
    // Legend bar: the same table, hottest at the top.
    const { bar } = layout;
    const legend = new ImageData(1, SHADES);
    for (let i = 0; i < SHADES; i++) {
      const shade = SHADES - 1 - i;
      legend.data.set([...TABLE.subarray(shade * 3, shade * 3 + 3), 255], i * 4);
    }
    this.bitmap.width = 1;
    this.bitmap.height = SHADES;
    this.bitmap.getContext("2d").putImageData(legend, 0, 0);
    ctx.imageSmoothingEnabled = true;
    ctx.drawImage(this.bitmap, bar.x, bar.y, bar.w, bar.h);
    if (this.hover !== null) this.#showTip(this.hover);
    if (this.onPaint) {
      const onPaint = this.onPaint;
      // The frame with this grid is painted between the animation frame and the task.
      requestAnimationFrame(() => setTimeout(() => onPaint(performance.now()), 0));
    }
  }

  #listen() {
    const local = (event) => {
      const box = this.canvas.getBoundingClientRect();
      return { x: event.clientX - box.left, y: event.clientY - box.top };
    };
    this.canvas.addEventListener("mousemove", (event) => {
      const at = local(event);
      if (this.dragFrom !== null) this.#showBand(this.dragFrom, at.x);
      this.hover = at;
      this.#showTip(at);
    });
    this.canvas.addEventListener("mouseleave", () => {
      this.hover = null;
      this.tip.hidden = true;
    });
    this.canvas.addEventListener("mousedown", (event) => {
      const at = local(event);
      if (this.layout && hitTest(this.layout, at.x, at.y)) this.dragFrom = at.x;
    });
    globalThis.addEventListener("mouseup", (event) => {
      if (this.dragFrom === null) return;
      const window = this.layout && dragWindow(this.layout, this.dragFrom, local(event).x);
      this.dragFrom = null;
      this.band.hidden = true;
      if (window) this.zoom(window);
    });
    this.canvas.addEventListener("dblclick", () => this.zoom(null));
  }

  #showTip(at) {
    const hit = this.layout && hitTest(this.layout, at.x, at.y);
    if (!hit) {
      this.tip.hidden = true;
      return;
    }
    const value = this.grid.rows[hit.row]?.[hit.expert];
    this.tip.textContent = `layer ${this.grid.layers[hit.row]}, expert ${hit.expert}: ${
      formatNumber(value, 3)
    } tokens/s`;
    this.tip.hidden = false;
    const width = this.container.clientWidth;
    const left = at.x + 12 + this.tip.offsetWidth > width
      ? at.x - 12 - this.tip.offsetWidth
      : at.x + 12;
    this.tip.style.left = `${Math.max(0, left)}px`;
    this.tip.style.top = `${at.y + 12}px`;
  }

  #showBand(x0, x1) {
    const { plot } = this.layout;
    const [a, b] = [Math.min(x0, x1), Math.max(x0, x1)];
    Object.assign(this.band.style, {
      left: `${Math.max(plot.x, a)}px`,
      top: `${plot.y}px`,
      width: `${Math.min(plot.x + plot.w, b) - Math.max(plot.x, a)}px`,
      height: `${plot.h}px`,
    });
    this.band.hidden = false;
  }
}
