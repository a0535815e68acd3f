/**
 * @module Expert load between two load-report snapshots, per layer, and its spread (CV,
 * balancedness): per backend (every routed-expert token it executed — what EPLB
 * balances across devices), per replica (each hosted copy of an expert: what
 * replication evens out) and per logical expert (what the gate chose; placement
 * cannot change it, only a routing bias can).
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import { balancedness, coefficientOfVariation } from "../../../shared/balancedness.ts";

/** Spread of one set of loads, averaged over layers. */
export interface LoadSpread {
  cv: number;
  balancedness: number;
}

function tokensOf(report: LoadReport | undefined, layer: number, expert: number): number {
  return report?.parts.find((p) => p.kind === "expert" && p.layer === layer && p.expert === expert)
    ?.tokens ?? 0;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Routed-expert tokens each backend executed per layer (every expert it ran, hosted by
 * the plan or loaded on demand): the load EPLB balances across devices.
 */
export function backendLoads(
  layers: number,
  before: ReadonlyMap<string, LoadReport>,
  after: ReadonlyMap<string, LoadReport>,
): number[][] {
  const executed = (report: LoadReport | undefined, layer: number) =>
    report?.parts.reduce(
      (sum, p) => p.kind === "expert" && p.layer === layer ? sum + p.tokens : sum,
      0,
    ) ?? 0;
  return Array.from(
    { length: layers },
    (_, layer) =>
      [...after].map(([backend, report]) =>
        Math.max(0, executed(report, layer) - executed(before.get(backend), layer))
      ),
  );
}

/** Tokens per logical expert per layer (all replicas together). */
export function logicalLoads(
  experts: number,
  layers: number,
  before: ReadonlyMap<string, LoadReport>,
  after: ReadonlyMap<string, LoadReport>,
): number[][] {
  return Array.from(
    { length: layers },
    (_, layer) =>
      Array.from({ length: experts }, (_, expert) => {
        let sum = 0;
        for (const [backend, report] of after) {
          sum += tokensOf(report, layer, expert) - tokensOf(before.get(backend), layer, expert);
        }
        return Math.max(0, sum);
      }),
  );
}

/**
 * Tokens per hosted replica per layer: for each backend (by report id) the experts it
 * hosts in each layer (`hosted[backend][layer]`), each with the tokens it executed —
 * zero for a hosted replica that got none.
 */
export function replicaLoads(
  layers: number,
  hosted: ReadonlyMap<string, readonly (readonly number[])[]>,
  before: ReadonlyMap<string, LoadReport>,
  after: ReadonlyMap<string, LoadReport>,
): number[][] {
  return Array.from(
    { length: layers },
    (_, layer) =>
      [...hosted].flatMap(([backend, experts]) =>
        (experts[layer] ?? []).map((expert) =>
          Math.max(
            0,
            tokensOf(after.get(backend), layer, expert) -
              tokensOf(before.get(backend), layer, expert),
          )
        )
      ),
  );
}

/** CV and balancedness of each layer's loads, averaged over the loaded layers. */
export function spread(loadsByLayer: readonly (readonly number[])[]): LoadSpread {
  const loaded = loadsByLayer.filter((loads) => loads.some((v) => v > 0));
  return {
    cv: mean(loaded.map((loads) => coefficientOfVariation(loads))),
    balancedness: mean(loaded.map((loads) => balancedness(loads))),
  };
}
