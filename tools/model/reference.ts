/**
 * @module Pure-TypeScript float64 reference forward pass of a model directory, reading the
 * same weights as the ONNX files: the oracle for numerical tests of the backends.
 *
 * Per layer: `logits = gate(h)` (float64, rounded to float32 for routing exactly as a
 * backend that gets float32 logits from ONNX Runtime would), routing with its own
 * implementation (`reference_routing.ts`, never the backend's), then
 * `h ← h + Σ_k w_k · expert_k(h) + Σ_s shared_s(h)` in float64 — each part applying the
 * layer's RMSNorm first when the model has one, so the layer is `h + MoE(norm(h))`.
 */
import { join } from "node:path";
import {
  type ModelManifest,
  ModelManifestSchema,
  type ModelPart,
  modelPartPath,
} from "../../shared/model_manifest.ts";
import { MANIFEST_FILE } from "./generate.ts";
import { expertWeightsFrom, gateWeightsFrom, loadOnnxInitializers } from "./onnx_weights.ts";
import { expertOutput, gateLogits } from "./reference_math.ts";
import { referenceRoute, referenceRouterFor } from "./reference_routing.ts";
import type { ExpertWeights, GateWeights } from "./weights.ts";

/** Options of `ReferenceModel.forward`. */
export interface ReferenceForwardOptions {
  /** Gate temperature (default 1). */
  temperature?: number;
}

/** Result of a reference forward pass. */
export interface ReferenceForwardResult {
  /** `[rows, d_model]` hidden states after the last layer. */
  output: Float32Array;
  /** `[layers, rows, top_k]` selected experts, best first. */
  expertIds: Int32Array;
  /** `[layers, rows, top_k]` combine weights. */
  expertWeights: Float32Array;
}

/** A model loaded for reference inference. */
export interface ReferenceModel {
  manifest: ModelManifest;
  /** Runs all layers on `tokens` `[rows, d_model]`. */
  forward(
    tokens: Float32Array,
    rows: number,
    options?: ReferenceForwardOptions,
  ): ReferenceForwardResult;
}

interface LayerWeights {
  gate: GateWeights;
  experts: ExpertWeights[];
  shared: ExpertWeights[];
}

/** Loads `moe.json` and every ONNX file's weights of the model directory `dir`. */
export async function loadReferenceModel(dir: string): Promise<ReferenceModel> {
  const manifest = ModelManifestSchema.parse(
    JSON.parse(await Deno.readTextFile(join(dir, MANIFEST_FILE))),
  );
  const load = async (part: ModelPart) =>
    await loadOnnxInitializers(join(dir, modelPartPath(manifest, part)));
  const layers: LayerWeights[] = [];
  for (let layer = 0; layer < manifest.layers; layer++) {
    const gate = gateWeightsFrom(await load({ kind: "gate", layer }));
    const experts: ExpertWeights[] = [];
    for (let expert = 0; expert < manifest.experts; expert++) {
      experts.push(expertWeightsFrom(await load({ kind: "expert", layer, expert })));
    }
    const shared: ExpertWeights[] = [];
    for (let expert = 0; expert < manifest.shared_experts; expert++) {
      shared.push(expertWeightsFrom(await load({ kind: "shared", layer, expert })));
    }
    layers.push({ gate, experts, shared });
  }
  checkShapes(manifest, layers);
  return {
    manifest,
    forward: (tokens, rows, options = {}) =>
      referenceForward(manifest, layers, tokens, rows, options),
  };
}

function referenceForward(
  manifest: ModelManifest,
  layers: LayerWeights[],
  tokens: Float32Array,
  rows: number,
  options: ReferenceForwardOptions,
): ReferenceForwardResult {
  const width = manifest.d_model;
  const topK = manifest.top_k;
  if (!Number.isInteger(rows) || rows < 0 || tokens.length !== rows * width) {
    throw new RangeError(
      `Cannot run reference forward: ${tokens.length} values for ${rows} rows of d_model ${width}`,
    );
  }
  const expertIds = new Int32Array(manifest.layers * rows * topK);
  const expertWeights = new Float32Array(manifest.layers * rows * topK);
  let hidden = Float64Array.from(tokens);
  layers.forEach((weights, layer) => {
    // Step 1: gate and route.
    const logits = Float32Array.from(gateLogits(weights.gate, hidden, rows));
    const router = referenceRouterFor(manifest, layer, options.temperature ?? 1);
    const routing = {
      experts: new Int32Array(rows * topK),
      weights: new Float32Array(rows * topK),
    };
    for (let row = 0; row < rows; row++) {
      const token = logits.subarray(row * manifest.experts, (row + 1) * manifest.experts);
      const { experts, weights } = referenceRoute(token, router);
      routing.experts.set(experts, row * topK);
      routing.weights.set(weights, row * topK);
    }
    expertIds.set(routing.experts, layer * rows * topK);
    expertWeights.set(routing.weights, layer * rows * topK);
    // Step 2: residual plus weighted routed experts, token by token.
    const next = hidden.slice();
    for (let row = 0; row < rows; row++) {
      const input = hidden.subarray(row * width, (row + 1) * width);
      for (let k = 0; k < topK; k++) {
        const expert = weights.experts[routing.experts[row * topK + k]!]!;
        const out = expertOutput(expert, input, 1, manifest.activation);
        const weight = routing.weights[row * topK + k]!;
        for (let c = 0; c < width; c++) next[row * width + c]! += weight * out[c]!;
      }
    }
    // Step 3: shared experts on every row.
    for (const shared of weights.shared) {
      const out = expertOutput(shared, hidden, rows, manifest.activation);
      for (let i = 0; i < next.length; i++) next[i]! += out[i]!;
    }
    hidden = next;
  });
  return { output: Float32Array.from(hidden), expertIds, expertWeights };
}

function checkShapes(manifest: ModelManifest, layers: LayerWeights[]): void {
  const fail = (what: string) => {
    throw new RangeError(`Cannot load reference model "${manifest.name}": ${what}`);
  };
  layers.forEach(({ gate, experts, shared }, layer) => {
    if (gate.dModel !== manifest.d_model || gate.experts !== manifest.experts) {
      fail(`layer ${layer} gate is [${gate.dModel}, ${gate.experts}], expected [d_model, experts]`);
    }
    for (const expert of [...experts, ...shared]) {
      if (expert.dModel !== manifest.d_model) {
        fail(
          `layer ${layer} has an expert of d_model ${expert.dModel}, expected ${manifest.d_model}`,
        );
      }
    }
  });
}
