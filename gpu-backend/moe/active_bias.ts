/**
 * @module The live routing-only bias of a backend: validation of an operator's
 * `number[][]` (layers × experts, finite) into per-layer `Float32Array`s, and the summary
 * shown by `PUT /v2/gate/bias` and `/v2/health/ready`. Pure.
 */

/** Shape the bias must have. */
export interface BiasShape {
  layers: number;
  experts: number;
}

/** What is active: whether a bias is set and, per layer, its largest |b|. */
export interface RoutingBiasSummary {
  active: boolean;
  /** Per layer, the largest absolute bias; empty when none is set. */
  max_abs: number[];
}

/**
 * Checks `bias` (`[layers][experts]` of finite numbers) and converts it; `null` → none.
 * Throws a `TypeError`/`RangeError` naming the offending field (`bias[l][e]`).
 */
export function parseRoutingBias(bias: unknown, shape: BiasShape): Float32Array[] | undefined {
  if (bias === null) return undefined;
  if (!Array.isArray(bias)) {
    throw new TypeError(`Cannot set routing bias: bias must be an array of layers or null`);
  }
  if (bias.length !== shape.layers) {
    throw new RangeError(
      `Cannot set routing bias: bias has ${bias.length} layers, the model has ${shape.layers}`,
    );
  }
  return bias.map((row: unknown, layer) => {
    if (!Array.isArray(row)) {
      throw new TypeError(`Cannot set routing bias: bias[${layer}] must be an array of numbers`);
    }
    if (row.length !== shape.experts) {
      throw new RangeError(
        `Cannot set routing bias: bias[${layer}] has ${row.length} experts, the model has ${shape.experts}`,
      );
    }
    const values = new Float32Array(shape.experts);
    row.forEach((value: unknown, expert) => {
      // Also rejects values finite in float64 that overflow float32.
      if (typeof value !== "number" || !Number.isFinite(Math.fround(value))) {
        throw new RangeError(
          `Cannot set routing bias: bias[${layer}][${expert}] must be a finite number, got ${
            describe(value)
          }`,
        );
      }
      values[expert] = value;
    });
    return values;
  });
}

function describe(value: unknown): string {
  return typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value);
}

/** The summary of an active bias (`undefined` = none). */
export function summarizeRoutingBias(
  bias: readonly Float32Array[] | undefined,
): RoutingBiasSummary {
  if (bias === undefined) return { active: false, max_abs: [] };
  return {
    active: true,
    max_abs: bias.map((layer) => layer.reduce((max, b) => Math.max(max, Math.abs(b)), 0)),
  };
}
