/**
 * @module Placement-planner input: the zod schema, precise field errors, and the choice
 * between the hierarchical and the global policy.
 */
import { z } from "zod";

const positiveInt = z.number().int().min(1);

/** Schema of the planner input (snake_case, as in DeepSeek's `rebalance_experts`). */
export const placementInputSchema = z.object({
  weight: z.array(z.array(z.number().min(0)).min(1)).min(1),
  num_replicas: positiveInt,
  num_groups: positiveInt,
  num_nodes: positiveInt,
  num_gpus: positiveInt,
});

/** Load per layer per logical expert, and the cluster shape to place replicas on. */
export type PlacementInput = z.infer<typeof placementInputSchema>;

/** A policy name: `auto` picks hierarchical when groups divide evenly over nodes. */
export type PlacementPolicy = "auto" | "hierarchical" | "global";

/** The policy actually run. */
export type ResolvedPolicy = "hierarchical" | "global";

/** Validates `raw` as planner input; throws TypeError/RangeError naming the bad field. */
export function parsePlacementInput(raw: unknown): PlacementInput {
  const result = placementInputSchema.safeParse(raw);
  if (!result.success) throw issueError(raw, result.error.issues[0]!);
  const input = result.data;
  const experts = input.weight[0]!.length;
  input.weight.forEach((row, layer) => {
    if (row.length !== experts) {
      fail(
        RangeError,
        `"weight[${layer}]" has ${row.length} experts but "weight[0]" has ${experts} (rows must be equal length)`,
      );
    }
  });
  if (input.num_replicas < experts) {
    fail(
      RangeError,
      `"num_replicas" (${input.num_replicas}) must be at least the number of logical experts (${experts})`,
    );
  }
  if (input.num_replicas % input.num_gpus !== 0) {
    fail(
      RangeError,
      `"num_replicas" (${input.num_replicas}) must be divisible by "num_gpus" (${input.num_gpus})`,
    );
  }
  if (input.num_gpus % input.num_nodes !== 0) {
    fail(
      RangeError,
      `"num_gpus" (${input.num_gpus}) must be divisible by "num_nodes" (${input.num_nodes})`,
    );
  }
  if (experts % input.num_groups !== 0) {
    fail(
      RangeError,
      `"num_groups" (${input.num_groups}) must divide the number of logical experts (${experts})`,
    );
  }
  return input;
}

/** The policy to run: explicit names are checked, `auto` falls back to global. */
export function resolvePolicy(
  input: PlacementInput,
  policy: PlacementPolicy = "auto",
): ResolvedPolicy {
  const divisible = input.num_groups % input.num_nodes === 0;
  if (policy === "global") return "global";
  if (policy === "hierarchical" && !divisible) {
    fail(
      RangeError,
      `"num_groups" (${input.num_groups}) must be divisible by "num_nodes" (${input.num_nodes}) for the hierarchical policy`,
    );
  }
  if (policy !== "auto" && policy !== "hierarchical") {
    fail(RangeError, `unknown policy "${policy satisfies never}"`);
  }
  return divisible ? "hierarchical" : "global";
}

function fail(kind: typeof RangeError | typeof TypeError, reason: string): never {
  throw new kind(`Cannot plan placement: ${reason}`);
}

function issueError(raw: unknown, issue: z.core.$ZodIssue): Error {
  const field = issue.path.reduce<string>(
    (name, key) =>
      typeof key === "number" ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key),
    "",
  );
  const name = field === "" ? "input" : `"${field}"`;
  const value = valueAt(raw, issue.path);
  const text = typeof value === "number" ? String(value) : JSON.stringify(value) ?? "undefined";
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  const expected = describe(field, issue);
  // A number failing a type check is NaN, ±Infinity or a fraction: a bad value, not a bad type.
  const badType = issue.code === "invalid_type" && typeof value !== "number";
  const kind = badType ? TypeError : RangeError;
  return new kind(`Cannot plan placement: ${name} ${expected}, got ${shown}`);
}

function describe(field: string, issue: z.core.$ZodIssue): string {
  const isWeight = field.startsWith("weight");
  if (issue.code === "too_small" && issue.origin === "array") {
    return field === "weight" ? "must have at least one layer" : "must have at least one expert";
  }
  if (issue.code === "invalid_type" && issue.expected === "array") return "must be an array";
  if (issue.code === "invalid_type" && issue.expected === "object") return "must be an object";
  if (isWeight) return "must be a finite number ≥ 0";
  return "must be a positive integer";
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Per-layer problem shape: the global policy is one node holding one group. */
export interface LayerShape {
  numPhysical: number;
  numGroups: number;
  numNodes: number;
  numGpus: number;
}

/** The per-layer shape of a validated input under `policy`. */
export function layerShape(input: PlacementInput, policy: PlacementPolicy = "auto"): LayerShape {
  const hierarchical = resolvePolicy(input, policy) === "hierarchical";
  return {
    numPhysical: input.num_replicas,
    numGroups: hierarchical ? input.num_groups : 1,
    numNodes: hierarchical ? input.num_nodes : 1,
    numGpus: input.num_gpus,
  };
}
