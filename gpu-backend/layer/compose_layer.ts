/**
 * @module Composes a layer executable: one ONNX graph that runs every routed expert a
 * backend hosts for one MoE layer, the layer's shared experts, the residual combine and
 * (optionally) the next layer's gate, in one `session.run()`.
 *
 * Built generically from the model's own ONNX files: each expert graph (any graph with
 * input `x` `[n, d]` and output `y` `[n, d]`: MatMul or Gemm, biases, any activation,
 * several MatMuls for SwiGLU …) is inlined with its names renamed (`inline_graph.ts`).
 *
 * Interface of the composed graph (`R` rows, `M ≤ R` of them entry tokens, `N` routed
 * assignments sorted by hosted expert, `k` hosted experts):
 *
 *   inputs  rows     [R, d]  f32  unique input rows: entry tokens first, then peers' rows
 *           residual [M, d]  f32  residual stream of the entry tokens (their rows, plus
 *                                 contributions computed elsewhere: peers, on-demand experts)
 *           src      [N]     i32  the row of each assignment, grouped by hosted expert
 *           counts   [k]     i32  assignments per hosted expert, in hosting order (sum N)
 *           weight   [N, 1]  f32  combine weight of each assignment
 *   outputs routed   [R, d]  f32  Σ weight · expert(row) per row (what a peer row needs)
 *           hidden   [M, d]  f32  residual + routed[:M] + Σ_shared shared(rows[:M])
 *           logits   [M, E]  f32  next layer's gate on `hidden` (only with `nextGate`)
 *
 * Step 1: Gather the assigned rows; Split them by `counts` (a runtime split input, so a
 *         hosted expert with zero rows gets a zero-sized chunk). Indices arrive as int32
 *         (no BigInt work in JavaScript) and are cast where ONNX wants int64.
 * Step 2: each expert on its chunk; Concat; × weight; ScatterND (reduction add) into
 *         zeros `[R, d]` — a row chosen by two hosted experts gets both contributions.
 *         A `routedLayout` may build steps 1–2 another way (`bench:kernel` tries stacked
 *         experts as batched ops: tools/bench/kernel/stacked_layout.ts).
 * Step 3: shared experts on the entry rows; hidden = residual + routed + shared.
 * Step 4: the next layer's gate on hidden.
 *
 * Opset: the composed graph uses the experts' default-domain opset, at least 17
 * (ScatterND's `reduction` needs 16, `Shape(start, end)` 15). Expert files below opset
 * 13 (where `Split`, `Unsqueeze`, `ReduceSum` … took attributes instead of inputs) are
 * refused rather than silently reinterpreted.
 */
import pkg from "onnx-proto";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import { decodeModel, type InlinedGraph, inlineGraph, prefixer } from "./inline_graph.ts";

const { onnx } = pkg;

/** Input and output names of a composed layer graph. */
export const LAYER_IO = {
  rows: "rows",
  residual: "residual",
  src: "src",
  counts: "counts",
  weight: "weight",
  routed: "routed",
  hidden: "hidden",
  logits: "logits",
} as const;

/** Smallest default-domain opset the composed graph runs at. */
export const MIN_COMPOSED_OPSET = 17;
/** Oldest expert opset composed (older ones changed signatures of common ops). */
export const MIN_EXPERT_OPSET = 13;

/** What to compose. */
export interface LayerGraphSpec {
  /** Hidden width `d`. */
  dModel: number;
  /** Routed experts hosted here, in hosting order (the order of `counts`). */
  experts: readonly { id: number; bytes: Uint8Array }[];
  /** Shared experts' ONNX bytes (run on every entry row). */
  shared: readonly Uint8Array[];
  /** The next layer's gate, fused when given; `logits` is then `[M, nextExperts]`. */
  nextGate?: { bytes: Uint8Array; experts: number };
  /**
   * Builds steps 1–2 (the routed experts into `routed`) another way, or answers false to
   * keep the default: each expert inlined on its own chunk (split). For benchmarks
   * (`bench:kernel` measured stacked batched ops slower on onnxruntime's CPU provider:
   * `docs/results/bench-kernel.md`), so the backend always splits.
   */
  routedLayout?: RoutedLayout;
}

/**
 * Builds the routed part of a composed layer from the hosted experts' graphs (hosting
 * order) with `builder`, reading the `LAYER_IO` inputs and writing `LAYER_IO.routed`;
 * false leaves the graph untouched (the split layout is built instead).
 */
export type RoutedLayout = (
  builder: GraphBuilder,
  experts: readonly pkg.onnx.IGraphProto[],
) => boolean;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const INT32 = onnx.TensorProto.DataType.INT32;

/** ONNX bytes of the composed layer graph for `spec`. */
export function composeLayerGraph(spec: LayerGraphSpec): Uint8Array {
  const parts = decodeParts(spec);
  const builder = new GraphBuilder();
  const d = spec.dModel;
  const k = spec.experts.length;
  // Step 1 + 2: routed experts on their rows, weighted, scattered back per row.
  buildRouted(builder, spec, parts);
  // Step 3: entry rows — residual + their routed part + shared experts.
  buildEntry(builder, spec, parts);
  // Step 4: the next layer's gate on the new hidden state.
  if (spec.nextGate) {
    const gate = parts[parts.length - 1]!;
    const out = builder.inline(gate.model, "G/", LAYER_IO.hidden, gate.what);
    builder.node("Identity", [out], [LAYER_IO.logits]);
  }

  return builder.encode({
    inputs: [
      tensorInfo(LAYER_IO.rows, FLOAT, ["R", d]),
      tensorInfo(LAYER_IO.residual, FLOAT, ["M", d]),
      tensorInfo(LAYER_IO.src, INT32, ["N"]),
      tensorInfo(LAYER_IO.counts, INT32, [k]),
      tensorInfo(LAYER_IO.weight, FLOAT, ["N", 1]),
    ],
    outputs: [
      tensorInfo(LAYER_IO.routed, FLOAT, ["R", d]),
      tensorInfo(LAYER_IO.hidden, FLOAT, ["M", d]),
      ...(spec.nextGate ? [tensorInfo(LAYER_IO.logits, FLOAT, ["M", spec.nextGate.experts])] : []),
    ],
    models: parts.map((p) => p.model),
  });
}

/** A graph the layer inlines, and what it is (for error messages). */
interface LayerPart {
  what: string;
  model: pkg.onnx.ModelProto;
}

/** The routed experts' models (hosting order), then the shared experts', then the next gate's. */
function decodeParts(spec: LayerGraphSpec): LayerPart[] {
  return [
    ...spec.experts.map((e) => ({
      what: `expert ${e.id}`,
      model: decodeModel(e.bytes, `expert ${e.id}`),
    })),
    ...spec.shared.map((bytes, i) => ({
      what: `shared expert ${i}`,
      model: decodeModel(bytes, `shared expert ${i}`),
    })),
    ...(spec.nextGate
      ? [{ what: "next gate", model: decodeModel(spec.nextGate.bytes, "next gate") }]
      : []),
  ];
}

/**
 * Steps 1 + 2: the routed experts on their rows (gathered, split by count, each expert's
 * graph), weighted and scattered back per row into `LAYER_IO.routed`; zeros when nothing
 * is hosted; `spec.routedLayout` may build it instead.
 */
function buildRouted(builder: GraphBuilder, spec: LayerGraphSpec, parts: LayerPart[]): void {
  const k = spec.experts.length;
  const custom = k > 1 &&
    (spec.routedLayout?.(builder, parts.slice(0, k).map((p) => p.model.graph!)) ?? false);
  if (custom) {
    // The layout built the routed part.
  } else if (k > 0) {
    builder.node("Gather", [LAYER_IO.rows, LAYER_IO.src], ["routed/gathered"], { axis: 0 });
    const chunks = spec.experts.map((e) => `routed/x${e.id}`);
    if (k === 1) builder.node("Identity", ["routed/gathered"], chunks);
    else {
      builder.node("Cast", [LAYER_IO.counts], ["routed/counts64"], { to: INT64 });
      builder.node("Split", ["routed/gathered", "routed/counts64"], chunks, { axis: 0 });
    }
    const outputs = spec.experts.map((e, i) =>
      builder.inline(parts[i]!.model, `E${e.id}/`, chunks[i]!, parts[i]!.what)
    );
    const joined = k === 1 ? outputs[0]! : "routed/joined";
    if (k > 1) builder.node("Concat", outputs, [joined], { axis: 0 });
    builder.node("Mul", [joined, LAYER_IO.weight], ["routed/weighted"]);
    builder.constant("routed/axis1", INT64, [1], [1]);
    builder.node("Cast", [LAYER_IO.src], ["routed/src64"], { to: INT64 });
    builder.node("Unsqueeze", ["routed/src64", "routed/axis1"], ["routed/index"]);
    builder.node("Shape", [LAYER_IO.rows], ["routed/shape"]);
    builder.node("ConstantOfShape", ["routed/shape"], ["routed/zeros"], {
      value: { name: "value", dataType: FLOAT, dims: [1], floatData: [0] },
    });
    builder.node("ScatterND", ["routed/zeros", "routed/index", "routed/weighted"], [
      LAYER_IO.routed,
    ], { reduction: "add" });
  } else {
    // Nothing hosted for this layer: no routed contribution.
    builder.node("Shape", [LAYER_IO.rows], ["routed/shape"]);
    builder.node("ConstantOfShape", ["routed/shape"], [LAYER_IO.routed], {
      value: { name: "value", dataType: FLOAT, dims: [1], floatData: [0] },
    });
  }
}

/** Step 3: entry rows — residual + their routed part + shared experts → `LAYER_IO.hidden`. */
function buildEntry(builder: GraphBuilder, spec: LayerGraphSpec, parts: LayerPart[]): void {
  const k = spec.experts.length;
  builder.node("Shape", [LAYER_IO.residual], ["entry/count"], { start: 0, end: 1 });
  builder.constant("entry/zero", INT64, [1], [0]);
  builder.node("Slice", [LAYER_IO.rows, "entry/zero", "entry/count", "entry/zero"], [
    "entry/rows",
  ]);
  builder.node("Slice", [LAYER_IO.routed, "entry/zero", "entry/count", "entry/zero"], [
    "entry/routed",
  ]);
  let sum = "entry/sum0";
  builder.node("Add", [LAYER_IO.residual, "entry/routed"], [sum]);
  spec.shared.forEach((_, i) => {
    const out = builder.inline(parts[k + i]!.model, `S${i}/`, "entry/rows", parts[k + i]!.what);
    const next = i === spec.shared.length - 1 ? LAYER_IO.hidden : `entry/sum${i + 1}`;
    builder.node("Add", [sum, out], [next]);
    sum = next;
  });
  if (spec.shared.length === 0) builder.node("Identity", [sum], [LAYER_IO.hidden]);
}

type AttributeValue = number | string | pkg.onnx.ITensorProto;

/** Accumulates nodes, weights and opset needs of the composed graph. */
export class GraphBuilder {
  readonly nodes: pkg.onnx.INodeProto[] = [];
  readonly initializers: pkg.onnx.ITensorProto[] = [];
  readonly sparseInitializers: pkg.onnx.ISparseTensorProto[] = [];
  readonly valueInfo: pkg.onnx.IValueInfoProto[] = [];

  node(
    opType: string,
    input: string[],
    output: string[],
    attributes: Record<string, AttributeValue> = {},
  ): void {
    this.nodes.push({
      opType,
      input,
      output,
      name: `${opType}:${output[0]}`,
      attribute: Object.entries(attributes).map(([name, value]) => attribute(name, value)),
    });
  }

  constant(name: string, dataType: number, dims: number[], values: number[]): void {
    this.initializers.push(
      dataType === INT64
        ? { name, dataType, dims, int64Data: values }
        : { name, dataType, dims, floatData: values },
    );
  }

  /**
   * Inlines `model`'s graph under `prefix`, reading `input`; returns its output's name.
   * The graph must map `x` to `y` (one input, one output).
   */
  inline(model: pkg.onnx.ModelProto, prefix: string, input: string, what: string): string {
    const graph = model.graph!;
    const names = {
      inputs: (graph.input ?? []).map((v) => v.name ?? ""),
      outputs: (graph.output ?? []).map((v) => v.name ?? ""),
    };
    const weights = new Set((graph.initializer ?? []).map((t) => t.name ?? ""));
    const inputs = names.inputs.filter((name) => !weights.has(name));
    if (inputs.length !== 1 || inputs[0] !== ONNX_INPUT_NAME) {
      throw new TypeError(
        `Cannot compose layer: ${what} must have exactly one input "${ONNX_INPUT_NAME}", has [${
          inputs.join(", ")
        }]`,
      );
    }
    if (names.outputs.length !== 1 || names.outputs[0] !== ONNX_OUTPUT_NAME) {
      throw new TypeError(
        `Cannot compose layer: ${what} must have exactly one output "${ONNX_OUTPUT_NAME}", has [${
          names.outputs.join(", ")
        }]`,
      );
    }
    const rename = prefixer(prefix);
    const inlined: InlinedGraph = inlineGraph(
      graph,
      (name) => name === ONNX_INPUT_NAME ? input : rename(name),
    );
    this.nodes.push(...inlined.nodes);
    this.initializers.push(...inlined.initializers);
    this.sparseInitializers.push(...inlined.sparseInitializers);
    this.valueInfo.push(...inlined.valueInfo);
    return inlined.outputs[0]!;
  }

  encode(io: {
    inputs: pkg.onnx.IValueInfoProto[];
    outputs: pkg.onnx.IValueInfoProto[];
    models: pkg.onnx.ModelProto[];
  }): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: Math.max(8, ...io.models.map((m) => Number(m.irVersion ?? 0))),
      producerName: "switchyard-layer",
      producerVersion: "1",
      opsetImport: mergeOpsets(io.models),
      functions: mergeFunctions(io.models),
      graph: {
        name: "layer",
        node: this.nodes,
        initializer: this.initializers,
        sparseInitializer: this.sparseInitializers,
        valueInfo: this.valueInfo,
        input: io.inputs,
        output: io.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}

/** Default domain at `max(MIN_COMPOSED_OPSET, experts')`, other domains at their highest. */
function mergeOpsets(models: readonly pkg.onnx.ModelProto[]): pkg.onnx.IOperatorSetIdProto[] {
  const versions = new Map<string, number>([["", MIN_COMPOSED_OPSET]]);
  for (const model of models) {
    for (const opset of model.opsetImport ?? []) {
      const domain = opset.domain === "ai.onnx" ? "" : opset.domain ?? "";
      const version = Number(opset.version ?? 0);
      if (domain === "" && version < MIN_EXPERT_OPSET) {
        throw new TypeError(
          `Cannot compose layer: a part uses ONNX opset ${version}; layer composition needs >= ${MIN_EXPERT_OPSET}`,
        );
      }
      versions.set(domain, Math.max(versions.get(domain) ?? 0, version));
    }
  }
  return [...versions].map(([domain, version]) => ({ domain, version }));
}

/** Model-local functions of every part, once each (identical duplicates merged). */
function mergeFunctions(models: readonly pkg.onnx.ModelProto[]): pkg.onnx.IFunctionProto[] {
  const byKey = new Map<string, { fn: pkg.onnx.IFunctionProto; bytes: string }>();
  for (const model of models) {
    for (const fn of model.functions ?? []) {
      const key = `${fn.domain ?? ""}:${fn.name ?? ""}`;
      const bytes = onnx.FunctionProto.encode(fn).finish().join(",");
      const known = byKey.get(key);
      if (known && known.bytes !== bytes) {
        throw new TypeError(`Cannot compose layer: parts define function "${key}" differently`);
      }
      byKey.set(key, { fn, bytes });
    }
  }
  return [...byKey.values()].map((entry) => entry.fn);
}

function attribute(name: string, value: AttributeValue): pkg.onnx.IAttributeProto {
  const { AttributeType } = onnx.AttributeProto;
  if (typeof value === "number") return { name, type: AttributeType.INT, i: value };
  if (typeof value === "string") {
    return { name, type: AttributeType.STRING, s: new TextEncoder().encode(value) };
  }
  return { name, type: AttributeType.TENSOR, t: value };
}

function tensorInfo(
  name: string,
  elemType: number,
  dims: (string | number)[],
): pkg.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: {
          dim: dims.map((dim) => (typeof dim === "string" ? { dimParam: dim } : { dimValue: dim })),
        },
      },
    },
  };
}
