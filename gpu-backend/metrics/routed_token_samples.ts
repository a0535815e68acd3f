/**
 * @module Pure: routed-expert token and execution counters of a load report as metric
 * samples, at the configured detail (`metrics.expert_detail`):
 *
 * - `expert`: one series per (layer, expert) — `layers × experts` series per backend
 *   and counter, e.g. 60 × 256 = 15 360;
 * - `backend`: summed per layer — `layers` series per backend, no `expert` label.
 *
 * Only routed experts count (kind `expert`); gates and shared experts see every row.
 */
import type { PartLoad } from "../../shared/load_report.ts";

/** `metrics.expert_detail`. */
export type ExpertDetail = "expert" | "backend";

/** A sample with model, layer and (at `expert` detail) expert labels. */
export interface RoutedSample {
  labels: { model: string; layer: number; expert?: number };
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
): RoutedSamples {
  const experts = parts.filter((part) => part.kind === "expert");
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
