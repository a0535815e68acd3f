/**
 * @module Request-type → expert affinity as probabilities: for each request type and
 * layer, the share of that type's expert selections each expert received. Multiplying
 * by a predicted selection count (tokens × top-k) gives predicted per-expert load.
 */
import type { AffinityCounts } from "./traffic_store.ts";

/** `[type]` → `[layer][expert]` share of the type's selections in that layer (rows sum to 1). */
export function affinityShares(counts: AffinityCounts): Record<string, number[][]> {
  const shares: Record<string, number[][]> = {};
  for (const [type, layers] of Object.entries(counts)) {
    shares[type] = layers.map((experts) => {
      const total = experts.reduce((sum, count) => sum + count, 0);
      return experts.map((count) => total > 0 ? count / total : 0);
    });
  }
  return shares;
}
