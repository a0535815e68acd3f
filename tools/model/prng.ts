/**
 * @module Small seeded pseudo-random generators: mulberry32 uniforms, Box–Muller gaussians
 * and seed derivation, so generated models and demo traffic are reproducible.
 *
 * Not cryptographic. Each model part gets its own stream from `deriveSeed(seed, …)`, so a
 * part's weights depend only on the seed and the part, not on generation order.
 */

/** A uniform random number generator in `[0, 1)`. */
export type Random = () => number;

/** A mulberry32 generator seeded with a 32-bit integer. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal sampler (Box–Muller, one value cached) over a uniform generator. */
export function createGaussian(random: Random): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const value = spare;
      spare = undefined;
      return value;
    }
    const u = 1 - random(); // (0, 1], keeps log finite
    const v = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    spare = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };
}

/** A 32-bit seed mixed from a base seed and labels (splitmix32-style finaliser per step). */
export function deriveSeed(seed: number, ...labels: number[]): number {
  let hash = mix32(seed >>> 0);
  for (const label of [...labels, labels.length]) {
    hash = mix32(((hash + 0x9e3779b9) >>> 0) ^ (label >>> 0));
  }
  return hash;
}

function mix32(value: number): number {
  let hash = Math.imul(value ^ (value >>> 16), 0x21f0aaad) >>> 0;
  hash = Math.imul(hash ^ (hash >>> 15), 0x735a2d97) >>> 0;
  return (hash ^ (hash >>> 15)) >>> 0;
}

/** A `Float32Array` of `length` gaussian samples times `scale`. */
export function gaussianArray(gaussian: () => number, length: number, scale = 1): Float32Array {
  const values = new Float32Array(length);
  for (let i = 0; i < length; i++) values[i] = gaussian() * scale;
  return values;
}
