/**
 * @module Property tests: for every routing family (and for any mix of the knobs), the
 * backend's `routeTokens()` chooses exactly the experts of the reference forward pass's own
 * routing (`tools/model/reference_routing.ts`, written separately) and gives the same
 * weights up to float32 rounding — over random logits (ties included), groups and biases.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type ModelManifest, ModelManifestSchema } from "../../shared/model_manifest.ts";
import { referenceRoute, referenceRouterFor } from "../../tools/model/reference_routing.ts";
import { ROUTING_FAMILIES, type RoutingFamily } from "../../tools/model/routing_families.ts";
import { gateOptionsFor, routeTokens, selectionBiasFor } from "./routing.ts";

interface Case {
  manifest: ModelManifest;
  rows: number;
  logits: number[];
  temperature: number;
}

/** Logits: coarse values (so exact ties happen) or any float32 in a wide range. */
const logitValue = fc.oneof(
  fc.integer({ min: -40, max: 40 }).map((v) => v / 4),
  fc.double({ min: -12, max: 12, noNaN: true }).map(Math.fround),
);

/** A random routing problem for `family`; `free` also varies the family's fixed knobs. */
function routingCase(family: RoutingFamily, free = false): fc.Arbitrary<Case> {
  const shape = family.groups || free
    ? fc.record({ groups: fc.integer({ min: 2, max: 4 }), size: fc.integer({ min: 2, max: 4 }) })
    : fc.record({ groups: fc.constant(1), size: fc.integer({ min: 2, max: 16 }) });
  return shape.chain(({ groups, size }) => {
    const experts = groups * size;
    return fc.integer({ min: 1, max: groups }).chain((topkGroup) =>
      fc.record({
        rows: fc.integer({ min: 1, max: 5 }),
        topK: fc.integer({ min: 1, max: topkGroup * size }),
        bias: family.bias || free
          ? fc.array(fc.integer({ min: -8, max: 8 }).map((v) => v / 16), {
            minLength: experts,
            maxLength: experts,
          })
          : fc.constant(undefined),
        scale: family.scale || free
          ? fc.double({ min: 0.5, max: 20, noNaN: true })
          : fc.constant(1),
        scoring: free ? fc.constantFrom("softmax", "sigmoid") : fc.constant(family.router.scoring),
        groupScore: free
          ? fc.constantFrom("max", "sum_top2")
          : fc.constant(family.router.group_score),
        norm: free ? fc.boolean() : fc.constant(family.router.norm_topk_prob),
        temperature: free ? fc.double({ min: 0.25, max: 8, noNaN: true }) : fc.constant(1),
      }).chain((knobs) =>
        fc.array(logitValue, { minLength: knobs.rows * experts, maxLength: knobs.rows * experts })
          .map((logits): Case => ({
            rows: knobs.rows,
            logits,
            temperature: knobs.temperature,
            manifest: ModelManifestSchema.parse({
              name: "families",
              d_model: 4,
              d_ff: 4,
              layers: 1,
              experts,
              top_k: knobs.topK,
              groups,
              topk_group: topkGroup,
              router: {
                scoring: knobs.scoring,
                group_score: knobs.groupScore,
                norm_topk_prob: knobs.norm,
                routed_scaling_factor: knobs.scale,
                ...(knobs.bias ? { e_score_correction_bias: [knobs.bias] } : {}),
              },
            }),
          }))
      )
    );
  });
}

/** Asserts production == reference on one case; returns the largest weight difference. */
function compare({ manifest, rows, logits, temperature }: Case): number {
  const input = Float32Array.from(logits);
  const options = { ...gateOptionsFor(manifest, temperature), bias: selectionBiasFor(manifest, 0) };
  const routed = routeTokens(input, rows, manifest.experts, options);
  const router = referenceRouterFor(manifest, 0, temperature);
  const topK = manifest.top_k;
  let worst = 0;
  for (let row = 0; row < rows; row++) {
    const expected = referenceRoute(
      input.subarray(row * manifest.experts, (row + 1) * manifest.experts),
      router,
    );
    assert.deepEqual([...routed.experts.subarray(row * topK, (row + 1) * topK)], expected.experts);
    expected.weights.forEach((weight, k) => {
      const error = Math.abs(routed.weights[row * topK + k]! - weight);
      worst = Math.max(worst, error);
      assert(error <= 1e-6 * Math.max(1, Math.abs(weight)), `row ${row} k ${k}: ${error}`);
    });
  }
  return worst;
}

for (const family of ROUTING_FAMILIES) {
  Deno.test(`routeTokens() equals the reference routing for ${family.name}`, () => {
    fc.assert(fc.property(routingCase(family), (c) => void compare(c)), { numRuns: 300 });
  });
}

Deno.test("routeTokens() equals the reference routing for any mix of scoring, groups, bias, norm, scale and temperature", () => {
  fc.assert(fc.property(routingCase(ROUTING_FAMILIES[0]!, true), (c) => void compare(c)), {
    numRuns: 500,
  });
});

Deno.test("selection-only bias never changes the weight an expert gets", () => {
  // DeepSeek-V3 rule: weights are the unbiased sigmoid scores, renormalised and scaled.
  const manifest = ModelManifestSchema.parse({
    name: "v3",
    d_model: 4,
    d_ff: 4,
    layers: 1,
    experts: 4,
    top_k: 2,
    router: {
      scoring: "sigmoid",
      norm_topk_prob: true,
      routed_scaling_factor: 2.5,
      e_score_correction_bias: [[0, 0, 0, 1]],
    },
  });
  const logits = Float32Array.from([2, 1, 0, -1]);
  const routed = routeTokens(logits, 1, 4, {
    ...gateOptionsFor(manifest),
    bias: selectionBiasFor(manifest, 0),
  });
  assert.deepEqual([...routed.experts], [3, 0]); // 0.27 + 1 beats 0.88
  const s = (x: number) => 1 / (1 + Math.exp(-x));
  const sum = s(-1) + s(2);
  assert(Math.abs(routed.weights[0]! - 2.5 * s(-1) / sum) < 1e-6);
  assert(Math.abs(routed.weights[1]! - 2.5 * s(2) / sum) < 1e-6);
  // The manifest's bias and a live bias add up.
  const extra = Float32Array.from([0, 2, 0, 0]);
  assert.deepEqual([...selectionBiasFor(manifest, 0, extra)!], [0, 2, 0, 1]);
});
