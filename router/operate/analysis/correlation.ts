/**
 * @module Request type × expert correlation, from the traffic store's affinity counts
 * (expert selections per request type, layer and expert): for each request type, its
 * expert distribution per layer (shares summing to 1) and how concentrated it is.
 *
 * Concentration is {@linkcode concentration} (`1 − H(p) / ln n`): 0 when a type spreads
 * its selections evenly over the layer's experts, 1 when it always picks one expert.
 * A type's overall concentration is the mean over the layers where it selected anything.
 */
import type { AffinityCounts } from "../../control/traffic/traffic_store.ts";
import { concentration, shares } from "../../control/load/load_stats.ts";

/** One request type's expert distribution in one layer. */
export interface LayerCorrelation {
  layer: number;
  /** Expert selections (rows × top-k) of this type in this layer. */
  selections: number;
  /** `[expert]` → share of the type's selections, summing to 1 (all 0 when none). */
  shares: number[];
  /** 0 even … 1 single expert; `null` when the type selected nothing here. */
  concentration: number | null;
  /** Expert with the largest share; `null` when none. */
  topExpert: number | null;
}

/** One request type across the layers. */
export interface TypeCorrelation {
  requestType: string;
  /** Selections summed over layers. */
  selections: number;
  layers: LayerCorrelation[];
  /** Mean of the per-layer concentrations where defined; `null` when none is. */
  concentration: number | null;
}

/** Options of {@linkcode correlate}. */
export interface CorrelateOptions {
  /** Layers to report (default: as many as the counts have). */
  layers?: number;
  /** Experts per layer (default: the longest vector seen); shorter vectors are padded. */
  experts?: number;
}

function padded(vector: readonly number[] | undefined, length: number): number[] {
  const out = new Array<number>(length).fill(0);
  for (let i = 0; i < Math.min(length, vector?.length ?? 0); i++) out[i] = vector![i]!;
  return out;
}

function argmax(values: readonly number[]): number | null {
  let best: number | null = null;
  values.forEach((value, i) => {
    if (value > 0 && (best === null || value > values[best]!)) best = i;
  });
  return best;
}

/** The correlation of every request type in `counts`, sorted by request type; pure. */
export function correlate(
  counts: AffinityCounts,
  options: CorrelateOptions = {},
): TypeCorrelation[] {
  const all = Object.values(counts);
  const layerCount = options.layers ?? Math.max(0, ...all.map((layers) => layers.length));
  const experts = options.experts ??
    Math.max(0, ...all.flatMap((layers) => layers.map((vector) => vector.length)));
  return Object.keys(counts).sort().map((requestType) => {
    const layers = Array.from({ length: layerCount }, (_, layer): LayerCorrelation => {
      const vector = padded(counts[requestType]![layer], experts);
      const selections = vector.reduce((sum, count) => sum + count, 0);
      return {
        layer,
        selections,
        shares: shares(vector),
        concentration: selections > 0 ? concentration(vector) : null,
        topExpert: argmax(vector),
      };
    });
    const defined = layers.flatMap((l) => l.concentration === null ? [] : [l.concentration]);
    return {
      requestType,
      selections: layers.reduce((sum, l) => sum + l.selections, 0),
      layers,
      concentration: defined.length === 0
        ? null
        : defined.reduce((sum, c) => sum + c, 0) / defined.length,
    };
  });
}
