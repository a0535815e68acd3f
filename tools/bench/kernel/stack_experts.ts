/**
 * @module Stacked experts: when every routed expert of a layer is the same graph with
 * different weights, the composed layer runs them as one set of batched ops over a
 * padded `[k, R_max, d]` tensor instead of `k` inlined copies (`compose_layer.ts`);
 * `stackedLayout` plugs it into a composed layer as its routed layout. Benchmarks only
 * (`bench:kernel`): on onnxruntime's CPU provider it measured slower than split.
 *
 * "The same graph": equal node sequences (op, domain, input and output names,
 * attributes) and equal initializer names, types and shapes; only the weights differ.
 * The stacked graph keeps the node sequence with every per-expert value one rank
 * higher:
 * - activations (everything computed from `x`) `[n, c]` become `[k, R_max, c]`;
 * - an initializer whose bytes differ between experts is stored `[k, …]` with its own
 *   shape left-padded to rank 2 (`[c]` → `[k, 1, c]`, `[a, c]` → `[k, a, c]`), so it
 *   broadcasts against `[k, R_max, c]` exactly as it did against `[n, c]`; one equal in
 *   every expert (a scalar such as ½) stays as it is;
 * - `MatMul(act, W)` broadcasts over the leading dimension as it is;
 * - `Gemm(act, B, C)` becomes `MatMul(act, αB[ᵀ]) + βC` with `[k, 1, n]` bias (ONNX
 *   Gemm is 2-D only);
 * - reductions and softmax must act on the last axis only (the feature axis), with
 *   `keepdims`; an axis over rows would mix padded rows in.
 * Any other op (Reshape, Transpose, Concat, control flow …), a reduction over rows,
 * external or sparse weights refuse with a reason, and the caller falls back to the
 * per-expert composition — the generic `x → y` contract is never narrowed.
 */
import pkg from "onnx-proto";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../../shared/model_manifest.ts";
import { prefixer } from "../../../gpu-backend/layer/inline_graph.ts";
import {
  type GraphBuilder,
  LAYER_IO,
  type RoutedLayout,
} from "../../../gpu-backend/layer/compose_layer.ts";

const { onnx } = pkg;
type Graph = pkg.onnx.IGraphProto;
type Node = pkg.onnx.INodeProto;
type Tensor = pkg.onnx.ITensorProto;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const INT32 = onnx.TensorProto.DataType.INT32;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Ops applied element by element (any broadcasting), stacked as they are. */
const ELEMENTWISE = new Set([
  "Abs",
  "Add",
  "Cast",
  "Ceil",
  "Celu",
  "Cos",
  "Div",
  "Elu",
  "Erf",
  "Exp",
  "Floor",
  "Gelu",
  "HardSigmoid",
  "HardSwish",
  "Identity",
  "LeakyRelu",
  "Log",
  "Max",
  "Mean",
  "Min",
  "Mish",
  "Mul",
  "Neg",
  "Pow",
  "PRelu",
  "Reciprocal",
  "Relu",
  "Round",
  "Selu",
  "Sigmoid",
  "Sign",
  "Sin",
  "Softplus",
  "Softsign",
  "Sqrt",
  "Sub",
  "Sum",
  "Tanh",
  "Where",
]);
/** Reductions allowed over the last (feature) axis with `keepdims`. */
const REDUCTIONS = new Set([
  "ReduceL1",
  "ReduceL2",
  "ReduceLogSumExp",
  "ReduceMax",
  "ReduceMean",
  "ReduceMin",
  "ReduceProd",
  "ReduceSum",
  "ReduceSumSquare",
]);
/** Ops with an `axis` attribute that must be the last axis. */
const LAST_AXIS = new Set(["Softmax", "LogSoftmax", "Hardmax"]);

/** What stacking contributes to the composed graph, or why it cannot. */
export type StackedExperts =
  | { ok: true; nodes: Node[]; initializers: Tensor[]; output: string }
  | { ok: false; reason: string };

/** A value's kind while walking the graph. `rank` is the per-expert rank. */
type Kind =
  | { kind: "act" }
  | { kind: "shared"; rank: number }
  | { kind: "stacked"; rank: number };

/**
 * The experts' `graphs` as one stacked graph reading `input` `[k, R_max, d]` (expert
 * `i` on slice `i`), names under `prefix`; or the reason they cannot be stacked.
 */
export function stackExpertGraphs(
  graphs: readonly Graph[],
  prefix: string,
  input: string,
): StackedExperts {
  const first = graphs[0];
  if (!first) return { ok: false, reason: "no experts" };
  const same = sameStructure(graphs);
  if (same !== null) return { ok: false, reason: same };
  const rename = prefixer(prefix);
  const name = (n: string) => n === ONNX_INPUT_NAME ? input : rename(n);
  const k = graphs.length;
  const kinds = new Map<string, Kind>([[ONNX_INPUT_NAME, { kind: "act" }]]);
  const initializers: Tensor[] = [];
  const raw = new Map<string, { tensor: Tensor; bytes: Uint8Array[] }>();

  for (const [i, tensor] of (first.initializer ?? []).entries()) {
    const tName = tensor.name ?? "";
    const bytes: Uint8Array[] = [];
    for (const graph of graphs) {
      const b = rawBytes(graph.initializer![i]!);
      if (b === null) {
        return { ok: false, reason: `initializer "${tName}" is not stored inline` };
      }
      bytes.push(b);
    }
    const dims = (tensor.dims ?? []).map(Number);
    if (dims.length > 2) {
      return { ok: false, reason: `initializer "${tName}" has rank ${dims.length} > 2` };
    }
    raw.set(tName, { tensor, bytes });
    if (bytes.every((b) => equalBytes(b, bytes[0]!))) {
      kinds.set(tName, { kind: "shared", rank: dims.length });
      initializers.push({ ...plainTensor(tensor, bytes[0]!), name: name(tName) });
    } else {
      kinds.set(tName, { kind: "stacked", rank: dims.length });
      initializers.push({
        ...plainTensor(tensor, concatBytes(bytes)),
        name: name(tName),
        dims: [k, ...padRank2(dims)],
      });
    }
  }

  const nodes: Node[] = [];
  for (const node of first.node ?? []) {
    const op = node.opType ?? "";
    const where = `${op} node "${node.name ?? node.output?.[0] ?? ""}"`;
    if ((node.domain ?? "") !== "" && node.domain !== "ai.onnx") {
      return { ok: false, reason: `${where} is in domain "${node.domain}"` };
    }
    const ins = (node.input ?? []).map((n) => n === "" ? undefined : kinds.get(n));
    const outs = node.output ?? [];
    if (outs.length !== 1) return { ok: false, reason: `${where} has ${outs.length} outputs` };
    const attrs = new Map((node.attribute ?? []).map((a) => [a.name ?? "", a]));
    const copy = (attribute = node.attribute ?? []): Node => ({
      ...node,
      name: rename(node.name || `${op}:${outs[0]}`),
      input: (node.input ?? []).map((n) => n === "" ? "" : name(n)),
      output: outs.map(name),
      attribute,
    });
    if (op === "Constant") {
      const value = attrs.get("value");
      const rank = value?.t
        ? (value.t.dims ?? []).length
        : attrs.has("value_ints") || attrs.has("value_floats")
        ? 1
        : attrs.has("value_int") || attrs.has("value_float")
        ? 0
        : -1;
      if (rank < 0 || rank > 2) return { ok: false, reason: `${where} has no plain value` };
      kinds.set(outs[0]!, { kind: "shared", rank });
      nodes.push(copy());
      continue;
    }
    if (ins.some((kind, i) => kind === undefined && (node.input ?? [])[i] !== "")) {
      return { ok: false, reason: `${where} reads a value the graph does not define` };
    }
    const present = ins.filter((kind): kind is Kind => kind !== undefined);
    const act = present.some((kind) => kind.kind === "act");
    if (op === "MatMul") {
      const [a, b] = ins;
      const okB = b !== undefined && b.kind !== "act" && b.rank === 2;
      if (a?.kind !== "act" || !okB) {
        return { ok: false, reason: `${where}: only activation × rank-2 weight is stacked` };
      }
      kinds.set(outs[0]!, { kind: "act" });
      nodes.push(copy());
      continue;
    }
    if (op === "Gemm") {
      const gemm = stackGemm(node, raw, k, name, rename, where);
      if (!gemm.ok) return gemm;
      if (ins[0]?.kind !== "act") return { ok: false, reason: `${where}: A is not an activation` };
      nodes.push(...gemm.nodes);
      initializers.push(...gemm.initializers);
      kinds.set(outs[0]!, { kind: "act" });
      continue;
    }
    if (!act) {
      // Weights-only work (a Cast of float16 weights …): elementwise keeps the layout.
      if (!ELEMENTWISE.has(op)) return { ok: false, reason: `${where} transforms weights` };
      const stacked = present.some((kind) => kind.kind === "stacked");
      const rank = Math.max(0, ...present.map((kind) => kind.kind === "act" ? 2 : kind.rank));
      kinds.set(outs[0]!, stacked ? { kind: "stacked", rank } : { kind: "shared", rank });
      nodes.push(copy());
      continue;
    }
    if (ELEMENTWISE.has(op)) {
      kinds.set(outs[0]!, { kind: "act" });
      nodes.push(copy());
      continue;
    }
    if (REDUCTIONS.has(op)) {
      if (ins[0]?.kind !== "act" || (node.input ?? []).length > 1) {
        return { ok: false, reason: `${where}: axes given as an input` };
      }
      const axes = (attrs.get("axes")?.ints ?? []).map(Number);
      const keep = Number(attrs.get("keepdims")?.i ?? 1);
      if (axes.length === 0 || keep !== 1 || !axes.every((axis) => axis === 1 || axis === -1)) {
        return { ok: false, reason: `${where} reduces over rows or drops an axis` };
      }
      kinds.set(outs[0]!, { kind: "act" });
      nodes.push(copy(withInts(node, "axes", [-1])));
      continue;
    }
    if (LAST_AXIS.has(op)) {
      const axis = Number(attrs.get("axis")?.i ?? -1);
      if (axis !== 1 && axis !== -1) return { ok: false, reason: `${where} acts over rows` };
      kinds.set(outs[0]!, { kind: "act" });
      nodes.push(copy([
        ...(node.attribute ?? []).filter((a) => a.name !== "axis"),
        { name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: -1 },
      ]));
      continue;
    }
    return { ok: false, reason: `${where} is not an op the stacked layout supports` };
  }
  const y = kinds.get(ONNX_OUTPUT_NAME);
  if (y?.kind !== "act") {
    return {
      ok: false,
      reason: `output "${ONNX_OUTPUT_NAME}" is not computed from "${ONNX_INPUT_NAME}"`,
    };
  }
  // Weights only a rewritten Gemm read (its B and C) are dropped.
  const used = new Set(nodes.flatMap((node) => node.input ?? []));
  return {
    ok: true,
    nodes,
    initializers: initializers.filter((t) => used.has(t.name ?? "")),
    output: name(ONNX_OUTPUT_NAME),
  };
}

/** `Gemm(A, B, C)` → `MatMul(A, αB[ᵀ])` (+ `βC` as `[k, 1, n]`). */
function stackGemm(
  node: Node,
  raw: Map<string, { tensor: Tensor; bytes: Uint8Array[] }>,
  k: number,
  name: (n: string) => string,
  rename: (n: string) => string,
  where: string,
): { ok: true; nodes: Node[]; initializers: Tensor[] } | { ok: false; reason: string } {
  const attrs = new Map((node.attribute ?? []).map((a) => [a.name ?? "", a]));
  const num = (key: string, fallback: number) => {
    const a = attrs.get(key);
    return a === undefined ? fallback : key.startsWith("trans") ? Number(a.i ?? 0) : a.f ?? 0;
  };
  if (num("transA", 0) !== 0) return { ok: false, reason: `${where} has transA` };
  const [, bName = "", cName = ""] = node.input ?? [];
  const b = raw.get(bName);
  const c = cName === "" ? undefined : raw.get(cName);
  if (!b || (cName !== "" && !c)) return { ok: false, reason: `${where}: B or C is not a weight` };
  if (b.tensor.dataType !== FLOAT || (c && c.tensor.dataType !== FLOAT)) {
    return { ok: false, reason: `${where}: weights are not float32` };
  }
  const bDims = (b.tensor.dims ?? []).map(Number);
  if (bDims.length !== 2) return { ok: false, reason: `${where}: B is not a matrix` };
  const transB = num("transB", 0) === 1;
  const [inner, n] = transB ? [bDims[1]!, bDims[0]!] : [bDims[0]!, bDims[1]!];
  const alpha = num("alpha", 1);
  const beta = num("beta", 1);
  const out = (node.output ?? [])[0]!;
  const weight = new Float32Array(k * inner * n);
  b.bytes.forEach((bytes, e) => {
    const m = floats(bytes);
    const base = e * inner * n;
    for (let i = 0; i < inner; i++) {
      for (let j = 0; j < n; j++) {
        weight[base + i * n + j] = alpha * (transB ? m[j * inner + i]! : m[i * n + j]!);
      }
    }
  });
  const wName = rename(`${out}/gemm.B`);
  const initializers: Tensor[] = [
    { name: wName, dataType: FLOAT, dims: [k, inner, n], rawData: littleEndian(weight) },
  ];
  const matmul = c ? rename(`${out}/gemm.AB`) : name(out);
  const nodes: Node[] = [{
    opType: "MatMul",
    name: rename(`MatMul:${out}`),
    input: [name(node.input![0]!), wName],
    output: [matmul],
  }];
  if (c) {
    const cDims = (c.tensor.dims ?? []).map(Number);
    const size = cDims.reduce((p, q) => p * q, 1);
    if (!(size === n && (cDims.length <= 1 || cDims[0] === 1)) && size !== 1) {
      return { ok: false, reason: `${where}: C [${cDims}] is not a row bias` };
    }
    const bias = new Float32Array(k * n);
    c.bytes.forEach((bytes, e) => {
      const v = floats(bytes);
      for (let j = 0; j < n; j++) bias[e * n + j] = beta * v[size === 1 ? 0 : j]!;
    });
    const cStacked = rename(`${out}/gemm.C`);
    initializers.push({
      name: cStacked,
      dataType: FLOAT,
      dims: [k, 1, n],
      rawData: littleEndian(bias),
    });
    nodes.push({
      opType: "Add",
      name: rename(`Add:${out}`),
      input: [matmul, cStacked],
      output: [name(out)],
    });
  }
  return { ok: true, nodes, initializers };
}

/** null when every graph has the first one's structure, else what differs. */
function sameStructure(graphs: readonly Graph[]): string | null {
  const first = graphs[0]!;
  const inputs = (g: Graph) => {
    const weights = new Set((g.initializer ?? []).map((t) => t.name ?? ""));
    return (g.input ?? []).map((v) => v.name ?? "").filter((n) => !weights.has(n));
  };
  const signature = (g: Graph) =>
    JSON.stringify({
      inputs: inputs(g),
      outputs: (g.output ?? []).map((v) => v.name ?? ""),
      nodes: (g.node ?? []).map((n) => [
        n.opType,
        n.domain ?? "",
        n.input,
        n.output,
        (n.attribute ?? []).map((a) => onnx.AttributeProto.encode(a).finish().join(",")),
      ]),
      weights: (g.initializer ?? []).map((t) => [t.name, t.dataType, (t.dims ?? []).map(Number)]),
    });
  for (const g of graphs) {
    if ((g.sparseInitializer ?? []).length > 0) return "an expert has sparse weights";
    if ((g.node ?? []).some((n) => (n.attribute ?? []).some((a) => a.g || a.graphs?.length))) {
      return "an expert has control flow";
    }
  }
  const expected = signature(first);
  if (inputs(first).join() !== ONNX_INPUT_NAME) return `inputs are not ["${ONNX_INPUT_NAME}"]`;
  return graphs.every((g) => signature(g) === expected)
    ? null
    : "the experts' graphs differ in structure";
}

/** The tensor's values as little-endian bytes; null when stored outside the file. */
function rawBytes(tensor: Tensor): Uint8Array | null {
  if (tensor.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL) return null;
  if (tensor.rawData && tensor.rawData.length > 0) return tensor.rawData;
  const count = (tensor.dims ?? []).map(Number).reduce((p, q) => p * q, 1);
  if (tensor.dataType === FLOAT && (tensor.floatData ?? []).length === count) {
    return littleEndian(Float32Array.from(tensor.floatData!));
  }
  if (tensor.dataType === INT64 && (tensor.int64Data ?? []).length === count) {
    return littleEndian(BigInt64Array.from(tensor.int64Data!, (v) => BigInt(v.toString())));
  }
  if (tensor.dataType === INT32 && (tensor.int32Data ?? []).length === count) {
    return littleEndian(Int32Array.from(tensor.int32Data!));
  }
  return count === 0 ? new Uint8Array() : null;
}

/** `tensor` with its values replaced by `bytes` as `rawData`. */
function plainTensor(tensor: Tensor, bytes: Uint8Array): Tensor {
  return {
    name: tensor.name,
    dataType: tensor.dataType,
    dims: tensor.dims,
    rawData: bytes,
  };
}

function padRank2(dims: number[]): number[] {
  return [...new Array(2 - dims.length).fill(1), ...dims];
}

function withInts(node: Node, key: string, ints: number[]): pkg.onnx.IAttributeProto[] {
  return [
    ...(node.attribute ?? []).filter((a) => a.name !== key),
    { name: key, type: onnx.AttributeProto.AttributeType.INTS, ints },
  ];
}

function floats(bytes: Uint8Array): Float32Array {
  const copy = bytes.slice();
  if (LITTLE_ENDIAN) return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
  const view = new DataView(copy.buffer);
  return Float32Array.from({ length: copy.byteLength / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

function littleEndian(data: Float32Array | BigInt64Array | Int32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new RangeError("Cannot stack experts on a big-endian host");
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The stacked routed layout for `composeLayerGraph({ routedLayout })`: the experts as
 * batched ops when their graphs stack, else false (the split layout is built).
 */
export const stackedLayout: RoutedLayout = (builder, experts) => {
  const stacked = stackExpertGraphs(experts, "X/", "routed/padded");
  if (!stacked.ok) return false;
  routeStacked(builder, stacked);
  return true;
};

/**
 * Steps 1–2 with stacked experts: assignment `j` of hosted expert `e` goes to slot
 * `[e, j]` of a `[k, R_max, d]` tensor (`R_max` = the largest count); empty slots
 * repeat a real row and are masked out before the scatter-add.
 */
function routeStacked(builder: GraphBuilder, stacked: StackedExperts & { ok: true }): void {
  const b = builder;
  b.constant("pad/zero", INT64, [], [0]);
  b.constant("pad/one", INT64, [], [1]);
  b.constant("pad/axis0", INT64, [1], [0]);
  b.constant("pad/axis1", INT64, [1], [1]);
  b.constant("pad/axis2", INT64, [1], [2]);
  b.node("Cast", [LAYER_IO.counts], ["pad/counts"], { to: INT64 });
  b.node("ReduceMax", ["pad/counts"], ["pad/rmax"], { keepdims: 0 });
  b.node("Range", ["pad/zero", "pad/rmax", "pad/one"], ["pad/slot"]);
  b.node("CumSum", ["pad/counts", "pad/zero"], ["pad/offset"], { exclusive: 1 });
  b.node("Unsqueeze", ["pad/offset", "pad/axis1"], ["pad/offset_col"]);
  b.node("Unsqueeze", ["pad/counts", "pad/axis1"], ["pad/counts_col"]);
  b.node("Unsqueeze", ["pad/slot", "pad/axis0"], ["pad/slot_row"]);
  b.node("Add", ["pad/offset_col", "pad/slot_row"], ["pad/position"]);
  b.node("Less", ["pad/slot_row", "pad/counts_col"], ["pad/valid"]);
  b.node("Where", ["pad/valid", "pad/position", "pad/zero"], ["pad/assignment"]);
  b.node("Gather", [LAYER_IO.src, "pad/assignment"], ["pad/row32"], { axis: 0 });
  b.node("Gather", [LAYER_IO.rows, "pad/row32"], ["routed/padded"], { axis: 0 });
  b.nodes.push(...stacked.nodes);
  b.initializers.push(...stacked.initializers);
  b.node("Gather", [LAYER_IO.weight, "pad/assignment"], ["pad/weight"], { axis: 0 });
  b.node("Mul", [stacked.output, "pad/weight"], ["pad/weighted"]);
  b.node("Unsqueeze", ["pad/valid", "pad/axis2"], ["pad/valid3"]);
  b.constant("pad/zero_f", FLOAT, [], [0]);
  b.node("Where", ["pad/valid3", "pad/weighted", "pad/zero_f"], ["routed/weighted"]);
  b.node("Cast", ["pad/row32"], ["pad/row64"], { to: INT64 });
  b.node("Unsqueeze", ["pad/row64", "pad/axis2"], ["routed/index"]);
  b.node("Shape", [LAYER_IO.rows], ["routed/shape"]);
  b.node("ConstantOfShape", ["routed/shape"], ["routed/zeros"], {
    value: { name: "value", dataType: FLOAT, dims: [1], floatData: [0] },
  });
  b.node("ScatterND", ["routed/zeros", "routed/index", "routed/weighted"], [LAYER_IO.routed], {
    reduction: "add",
  });
}
