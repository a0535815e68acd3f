/**
 * @module Inter-arrival times of an open loop, as vLLM `bench serve` draws them: gamma
 * distributed with shape `burstiness` and mean `1 / rate`. `burstiness` 1 is a Poisson
 * process (exponential gaps); below 1 arrivals come in bursts (gap CV `1/√burstiness` > 1),
 * above 1 they are more even. Pure over an injected uniform generator.
 *
 * Gamma draws: Marsaglia and Tsang's squeeze method (ACM TOMS 26(3), 2000) for shape ≥ 1,
 * and for shape < 1 the boost `Gamma(k) = Gamma(k + 1) · U^(1/k)` from the same paper.
 */
import { createGaussian, type Random } from "../model/prng.ts";

/** A sampler of one gap (seconds) at an arrival rate (per second). */
export type GapSampler = (rate: number) => number;

/** Gaps of a gamma renewal process with shape `burstiness` (1 = Poisson). */
export function gammaGaps(random: Random, burstiness = 1): GapSampler {
  if (!(burstiness > 0) || !Number.isFinite(burstiness)) {
    throw new RangeError(`Cannot draw arrivals: burstiness must be > 0, got ${burstiness}`);
  }
  if (burstiness === 1) {
    // Exponential: the Poisson case, exactly as before (one uniform per gap).
    return (rate) => -Math.log(1 - random()) / rate;
  }
  const gamma = gammaSampler(random, burstiness);
  return (rate) => gamma() / (burstiness * rate);
}

/** A sampler of Gamma(shape, 1). */
export function gammaSampler(random: Random, shape: number): () => number {
  const gaussian = createGaussian(random);
  const boosted = shape < 1;
  const k = boosted ? shape + 1 : shape;
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  const draw = () => {
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = gaussian();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = 1 - random(); // (0, 1]
      if (u < 1 - 0.0331 * x ** 4) return d * v;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  };
  return boosted ? () => draw() * (1 - random()) ** (1 / shape) : draw;
}
