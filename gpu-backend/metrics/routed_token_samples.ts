/**
 * @module Pure: routed-expert token and execution counters of a load report as metric
 * samples, at the configured detail (`metrics.expert_detail`):
 *
 * - `expert`: one series per (layer, expert) — `layers × experts` series per backend
 *   and counter, e.g. 60 × 256 = 15 360;
 * - `top`: per layer, the `n` hottest hosted experts (most tokens since start; ties to the
 *   lower id) as their own series plus `expert="other"` summing the rest — at most
 *   `layers × (n + 1)` series per backend and counter, whatever the expert count. Same
 *   metric names as `expert`, so queries and dashboards work unchanged. Membership
 *   follows the cumulative counts: an expert that overtakes one in the top `n` gets its
 *   series (with its whole count) and `other` drops by that count, which `rate()` reads
 *   as one counter reset of `other` at that moment;
 * - `backend`: summed per layer — `layers` series per backend, no `expert` label.
 *
 * Only routed experts count (kind `expert`); gates and shared experts see every row.
 */
import type { PartLoad } from "../../shared/load_report.ts";

/** `metrics.expert_detail`. */
export type ExpertDetail = "expert" | "top" | "backend";

/** A sample with model, layer and (at `expert`/`top` detail) expert labels. */
export interface RoutedSample {
  labels: { model: string; layer: number; expert?: number | "other" };
  value: number;
}

/** Routed tokens and executions, one sample per series. */
export interface RoutedSamples {
  tokens: RoutedSample[];
  executions: RoutedSample[];
}

/** Routed-expert counters of `parts` at `detail`, in layer (and expert) order. */
export function routedTokenSamples(
  model: string,
  parts: readonly PartLoad[],
  detail: ExpertDetail,
  topN = 8,
): RoutedSamples {
  const experts = parts.filter((part) => part.kind === "expert");
  if (detail === "top") return topSamples(model, experts, topN);
  if (detail === "expert") {
    const sorted = [...experts].sort((a, b) => a.layer - b.layer || a.expert - b.expert);
    return {
      tokens: sorted.map((part) => ({
        labels: { model, layer: part.layer, expert: part.expert },
        value: part.tokens,
      })),
      executions: sorted.map((part) => ({
        labels: { model, layer: part.layer, expert: part.expert },
        value: part.executions,
      })),
    };
  }
  const layers = new Map<number, { tokens: number; executions: number }>();
  for (const part of experts) {
    const entry = layers.get(part.layer) ?? { tokens: 0, executions: 0 };
    entry.tokens += part.tokens;
    entry.executions += part.executions;
    layers.set(part.layer, entry);
  }
  const sorted = [...layers].sort(([a], [b]) => a - b);
  return {
    tokens: sorted.map(([layer, entry]) => ({ labels: { model, layer }, value: entry.tokens })),
    executions: sorted.map(([layer, entry]) => ({
      labels: { model, layer },
      value: entry.executions,
    })),
  };
}

/** The `top` detail: per layer the `n` hottest experts, then `other`. */
function topSamples(model: string, experts: readonly PartLoad[], n: number): RoutedSamples {
  const byLayer = new Map<number, PartLoad[]>();
  for (const part of experts) {
    const list = byLayer.get(part.layer) ?? [];
    list.push(part);
    byLayer.set(part.layer, list);
  }
  const out: RoutedSamples = { tokens: [], executions: [] };
  for (const [layer, parts] of [...byLayer].sort(([a], [b]) => a - b)) {
    const ranked = [...parts].sort((a, b) => b.tokens - a.tokens || a.expert - b.expert);
    const top = ranked.slice(0, n).sort((a, b) => a.expert - b.expert);
    for (const part of top) {
      out.tokens.push({ labels: { model, layer, expert: part.expert }, value: part.tokens });
      out.executions.push({
        labels: { model, layer, expert: part.expert },
        value: part.executions,
      });
    }
    const rest = ranked.slice(n);
    if (rest.length > 0) {
      const sum = (field: "tokens" | "executions") => rest.reduce((a, p) => a + p[field], 0);
      out.tokens.push({ labels: { model, layer, expert: "other" }, value: sum("tokens") });
      out.executions.push({ labels: { model, layer, expert: "other" }, value: sum("executions") });
    }
  }
  return out;
}
