/**
 * @module Which experts each backend must have warm for a predicted load, pure.
 *
 * An expert is needed when its predicted load is at least `minShare` of its layer's
 * expert load; it is needed on every backend that holds a replica of it under the plan
 * (each replica takes a share of its rows). Each backend's list is ordered hottest first
 * (predicted load per replica), so a backend whose memory budget runs out skips the
 * coldest.
 */
import type { PlacementPlan } from "../../../shared/placement_plan.ts";

/** Options of {@linkcode neededParts}. */
export interface NeededPartsOptions {
  /** Smallest share of the layer's predicted load that makes an expert needed; default 0.005. */
  minShare?: number;
}

/** Backend id → parts (`L{layer}/E{expert}`), hottest first. */
export function neededParts(
  plan: PlacementPlan,
  expertLoad: readonly (readonly number[])[],
  options: NeededPartsOptions = {},
): Map<string, string[]> {
  const minShare = options.minShare ?? 0.005;
  const perBackend = new Map<string, { part: string; load: number }[]>(
    plan.backends.map((b) => [b.id, []]),
  );
  for (const [layer, placement] of plan.layers.entries()) {
    const row = expertLoad[layer] ?? [];
    const total = row.reduce((sum, v) => sum + v, 0);
    if (total <= 0) continue;
    const replicas = new Map<number, number>();
    for (const expert of placement.phy2log) replicas.set(expert, (replicas.get(expert) ?? 0) + 1);
    const seen = new Set<string>();
    for (const [slot, expert] of placement.phy2log.entries()) {
      const load = row[expert] ?? 0;
      if (load < minShare * total || load <= 0) continue;
      const backend = plan.backends[Math.floor(slot / plan.slotsPerBackend)]!.id;
      const part = `L${layer}/E${expert}`;
      if (seen.has(`${backend} ${part}`)) continue;
      seen.add(`${backend} ${part}`);
      perBackend.get(backend)!.push({ part, load: load / replicas.get(expert)! });
    }
  }
  return new Map(
    [...perBackend].map((
      [id, parts],
    ) => [
      id,
      parts.sort((a, b) => b.load - a.load || (a.part < b.part ? -1 : 1)).map((p) => p.part),
    ]),
  );
}
