/**
 * @module Gate advice, honest about what each knob does. Pure.
 *
 * - Temperature: top-k on logits is deterministic, and dividing logits by a temperature
 *   keeps their order, so it never changes WHICH experts are chosen — only the softmax
 *   combine weights. It cannot balance load; the advice says so and never recommends it.
 * - Routing-only bias (DeepSeek-V3's auxiliary-loss-free balancing): a per-expert bias
 *   added to the scores used for top-k selection only (combine weights stay unbiased).
 *   A backend fits it on recorded inputs and reports the balance gain and how far the
 *   model's outputs move; it is recommended only when the gain is real and the output
 *   deviation stays within `gate.bias_deviation_budget`.
 */
import type { Advice } from "./advice_types.ts";

/** A backend's evaluation of a routing-only bias on its recorded inputs. */
export interface BiasEvaluation {
  backend: string;
  /** Recorded input rows evaluated. */
  rows: number;
  layers: {
    layer: number;
    balancednessBefore: number;
    balancednessAfter: number;
    bias: number[];
  }[];
  /** Relative L2 distance of the final outputs, biased vs unbiased. */
  outputRelativeL2: number;
  outputMaxAbs: number;
  /** Share of (row, layer, k) selections that changed. */
  selectionChanged: number;
}

/** What the temperature can and cannot do. */
export function temperatureAdvice(temperature: number): Advice {
  return {
    id: "gate_temperature",
    title: "Gate temperature (gate.temperature)",
    recommended: false,
    evidence: [
      `gate.temperature is ${temperature}`,
      "top-k selection is deterministic and a temperature keeps the order of the logits",
    ],
    expectedEffect: "changing it changes the combine weights of the chosen experts, never " +
      "which experts are chosen: it cannot move load between experts",
    risk: "changes model outputs with no balance benefit",
    apply: "none",
    details: { temperature },
  };
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Whether to apply a routing-only bias, from a backend's evaluation. */
export function biasAdvice(
  evaluation: BiasEvaluation | { error: string },
  budget: number,
  minGain = 0.05,
): Advice {
  const title = "Routing-only expert bias (auxiliary-loss-free balancing)";
  if ("error" in evaluation) {
    return {
      id: "gate_bias",
      title,
      recommended: false,
      evidence: [evaluation.error],
      expectedEffect: "none until a backend has recorded inputs to evaluate on",
      risk: "none",
      apply: "none",
      details: {},
    };
  }
  const before = mean(evaluation.layers.map((l) => l.balancednessBefore));
  const after = mean(evaluation.layers.map((l) => l.balancednessAfter));
  const gain = after - before;
  const withinBudget = evaluation.outputRelativeL2 <= budget;
  const recommended = gain >= minGain && withinBudget;
  return {
    id: "gate_bias",
    title,
    recommended,
    evidence: [
      `evaluated on ${evaluation.rows} recorded input rows on ${evaluation.backend}`,
      `expert selections' evenness (mean ÷ max across experts, not balancedness, which is ` +
      `across backends) ${before.toFixed(3)} → ${after.toFixed(3)} (mean over layers)`,
      `output deviation vs the unbiased model: relative L2 ${
        evaluation.outputRelativeL2.toFixed(4)
      }, max |Δ| ${evaluation.outputMaxAbs.toFixed(4)}; ${
        (evaluation.selectionChanged * 100).toFixed(1)
      } % of expert selections change`,
    ],
    expectedEffect: recommended
      ? `expert load evens out (evenness across experts +${
        gain.toFixed(3)
      }) at a measured output ` +
        `deviation of ${evaluation.outputRelativeL2.toFixed(4)} (budget ${budget})`
      : !withinBudget
      ? `not recommended: output deviation ${
        evaluation.outputRelativeL2.toFixed(4)
      } exceeds the budget ${budget} (gate.bias_deviation_budget)`
      : `not recommended: evenness gain ${gain.toFixed(3)} is below ${minGain}`,
    risk: "changes which experts some tokens use, so outputs differ from the unbiased " +
      "model by the measured deviation; the bias lives in backend memory until removed " +
      "or the backend restarts",
    apply: recommended ? "live" : "none",
    details: {
      rows: evaluation.rows,
      balancedness_before: before,
      balancedness_after: after,
      output_relative_l2: evaluation.outputRelativeL2,
      output_max_abs: evaluation.outputMaxAbs,
      selection_changed: evaluation.selectionChanged,
      budget,
      bias: evaluation.layers.map((l) => l.bias),
    },
  };
}
