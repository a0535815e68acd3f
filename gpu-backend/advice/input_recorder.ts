/**
 * @module A bounded uniform sample of the input rows (layer-0 tokens) a backend served,
 * for offline evaluations such as the routing-only bias (`bias_evaluation.ts`).
 *
 * Design: reservoir sampling (Vitter's Algorithm R) over rows. The first `capacity` rows
 * fill the reservoir; row number `n` (1-based) after that replaces a uniformly chosen
 * slot with probability `capacity / n`. Every row seen so far is then in the sample with
 * equal probability, memory stays `capacity × width` floats, and a request costs one
 * random draw per row plus a copy of only the rows that are kept.
 */

/** Options of {@linkcode InputRecorder}. */
export interface InputRecorderOptions {
  /** Floats per row (`d_model`). */
  width: number;
  /** Rows kept at most (default 256). */
  capacity?: number;
  /** Uniform random numbers in `[0, 1)` (default `Math.random`); injected for tests. */
  random?: () => number;
}

/** A copy of the recorded rows. */
export interface RecordedInputs {
  /** `[rows, width]`, row-major. */
  tokens: Float32Array;
  rows: number;
}

/** Keeps a uniform sample of at most `capacity` input rows; see the module doc. */
export class InputRecorder {
  readonly width: number;
  readonly capacity: number;
  readonly #random: () => number;
  readonly #reservoir: Float32Array;
  #size = 0;
  #seen = 0;

  constructor(options: InputRecorderOptions) {
    const { width, capacity = 256 } = options;
    if (!Number.isInteger(width) || width < 1) {
      throw new RangeError(
        `Cannot create input recorder: width must be an integer >= 1, got ${width}`,
      );
    }
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(
        `Cannot create input recorder: capacity must be an integer >= 1, got ${capacity}`,
      );
    }
    this.width = width;
    this.capacity = capacity;
    this.#random = options.random ?? Math.random;
    this.#reservoir = new Float32Array(capacity * width);
  }

  /** Offers the `rows` rows of `tokens` (`[rows, width]`); copies only the ones it keeps. */
  offer(tokens: Float32Array, rows: number): void {
    const width = this.width;
    if (tokens.length !== rows * width) {
      throw new RangeError(
        `Cannot record inputs: tokens length ${tokens.length} is not rows * width = ${
          rows * width
        }`,
      );
    }
    for (let row = 0; row < rows; row++) {
      this.#seen++;
      let slot: number;
      if (this.#size < this.capacity) {
        slot = this.#size++;
      } else {
        slot = Math.floor(this.#random() * this.#seen);
        if (slot >= this.capacity) continue;
      }
      this.#reservoir.set(tokens.subarray(row * width, (row + 1) * width), slot * width);
    }
  }

  /** Rows offered so far. */
  get seen(): number {
    return this.#seen;
  }

  /** Rows held now (`min(seen, capacity)`). */
  get size(): number {
    return this.#size;
  }

  /** A copy of the rows held now. */
  snapshot(): RecordedInputs {
    return { tokens: this.#reservoir.slice(0, this.#size * this.width), rows: this.#size };
  }

  /** Forgets every row. */
  clear(): void {
    this.#size = 0;
    this.#seen = 0;
  }
}
