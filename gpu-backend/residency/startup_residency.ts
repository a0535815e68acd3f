/**
 * @module Expert residency at backend start: the budget from configuration, sizes from
 * the model files, and what to load before serving. Without a budget every part is
 * loaded at start (as always); with one, gates and shared experts are loaded, then routed
 * experts are warmed until the budget is full — one expert of every layer in turn
 * (`E0` of each layer, then `E1`, …) so no layer starts out all cold.
 */
import { listModelParts, type ModelManifest, type ModelPart } from "../../shared/model_manifest.ts";
import { expertFileBytes } from "./expert_bytes.ts";
import { ExpertResidency } from "./expert_residency.ts";

/** Options of {@linkcode startupResidency}. */
export interface StartupResidencyOptions {
  modelDir: string;
  manifest: ModelManifest;
  /** `backend.memory_budget_mb`; unset = unlimited. */
  memoryBudgetMb?: number | undefined;
}

/** The residency tracker, the parts the executor loads at start, and experts to warm. */
export interface StartupResidency {
  residency: ExpertResidency;
  /** Parts the executor loads when created; `undefined` = every part. */
  executorParts: ModelPart[] | undefined;
  /** Routed experts to warm (through the placement state) before serving. */
  warmAtStart: ModelPart[];
}

/** Routed experts that fit `budgetBytes`, one per layer in turn. */
export function startupExperts(
  manifest: ModelManifest,
  bytes: (layer: number, expert: number) => number,
  budgetBytes: number,
): ModelPart[] {
  const chosen: ModelPart[] = [];
  let used = 0;
  for (let expert = 0; expert < manifest.experts; expert++) {
    for (let layer = 0; layer < manifest.layers; layer++) {
      const size = bytes(layer, expert);
      if (used + size > budgetBytes) continue;
      used += size;
      chosen.push({ kind: "expert", layer, expert });
    }
  }
  return chosen;
}

/** Builds the residency of a starting backend from its configuration. */
export async function startupResidency(
  options: StartupResidencyOptions,
): Promise<StartupResidency> {
  const { manifest, memoryBudgetMb } = options;
  const sizes = await expertFileBytes(options.modelDir, manifest);
  const bytes = (layer: number, expert: number) => sizes[layer]![expert]!;
  if (memoryBudgetMb === undefined) {
    return {
      residency: new ExpertResidency({ bytes }),
      executorParts: undefined,
      warmAtStart: [],
    };
  }
  const budgetBytes = Math.floor(memoryBudgetMb * 2 ** 20);
  return {
    residency: new ExpertResidency({ budgetBytes, bytes }),
    executorParts: listModelParts(manifest).filter((part) => part.kind !== "expert"),
    warmAtStart: startupExperts(manifest, bytes, budgetBytes),
  };
}
