// deno-lint-ignore-file no-console
/**
 * @module Measures how closely the backend's routing (`gpu-backend/moe/routing.ts`) agrees
 * with the reference forward pass's own routing (`reference_routing.ts`) for every family:
 * random tokens (256 experts in 8 groups for the grouped families, 64 otherwise, as in
 * DeepSeek-V3 and OLMoE), logits ~ N(0, 2²), correction biases ~ N(0, 0.1²), scaling as the
 * released configs (DeepSeek-V2 16, DeepSeek-V3 2.5). Prints a Markdown table and writes it
 * with its command to `--out` (default `docs/results/routing_families.md`).
 *
 * `deno run -A tools/model/routing_agreement.ts [--tokens 20000] [--out FILE]`
 */
import { parseArgs } from "node:util";
import { ModelManifestSchema } from "../../shared/model_manifest.ts";
import { gateOptionsFor, routeTokens, selectionBiasFor } from "../../gpu-backend/moe/routing.ts";
import { createGaussian, createRandom } from "./prng.ts";
import { referenceRoute, referenceRouterFor } from "./reference_routing.ts";
import { ROUTING_FAMILIES } from "./routing_families.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    tokens: { type: "string", default: "20000" },
    out: { type: "string", default: "docs/results/routing_families.md" },
  },
});
const tokens = Number(values.tokens);
const rows: string[] = [
  "| family | routing rule | experts (groups) | top-k | tokens | expert-id mismatches | max abs weight error |",
  "| --- | --- | --- | --- | --- | --- | --- |",
];
for (const [index, family] of ROUTING_FAMILIES.entries()) {
  const gaussian = createGaussian(createRandom(100 + index));
  const experts = family.groups ? 256 : 64;
  const groups = family.groups ? 8 : 1;
  const topK = 8;
  const scale = family.name.startsWith("deepseek_v2")
    ? 16
    : family.name.startsWith("deepseek_v3")
    ? 2.5
    : 1;
  const manifest = ModelManifestSchema.parse({
    name: "agreement",
    d_model: 4,
    d_ff: 4,
    layers: 1,
    experts,
    top_k: topK,
    groups,
    topk_group: family.groups ? 4 : 1,
    router: {
      ...family.router,
      routed_scaling_factor: scale,
      ...(family.bias
        ? { e_score_correction_bias: [Array.from({ length: experts }, () => 0.1 * gaussian())] }
        : {}),
    },
  });
  const logits = Float32Array.from({ length: tokens * experts }, () => 2 * gaussian());
  const routed = routeTokens(logits, tokens, experts, {
    ...gateOptionsFor(manifest),
    bias: selectionBiasFor(manifest, 0),
  });
  const router = referenceRouterFor(manifest, 0);
  let mismatches = 0;
  let worst = 0;
  for (let t = 0; t < tokens; t++) {
    const expected = referenceRoute(logits.subarray(t * experts, (t + 1) * experts), router);
    expected.experts.forEach((e, k) => {
      if (routed.experts[t * topK + k] !== e) mismatches++;
      worst = Math.max(worst, Math.abs(routed.weights[t * topK + k]! - expected.weights[k]!));
    });
  }
  rows.push(
    `| ${family.name} | ${family.rule} | ${experts} (${groups}) | ${topK} | ${tokens} | ${mismatches} | ${
      worst.toExponential(2)
    } |`,
  );
}
const table = rows.join("\n");
console.log(table);
await Deno.writeTextFile(
  values.out,
  `# Routing families: backend routing vs the reference's own routing\n\n` +
    `Command: \`deno run -A tools/model/routing_agreement.ts --tokens ${tokens}\`\n\n` +
    `The backend stores weights as float32, the reference keeps float64: the error is the float32\n` +
    `rounding of weights up to the routed scaling factor. Expert ids are compared position by\n` +
    `position (best first).\n\n${table}\n`,
);
