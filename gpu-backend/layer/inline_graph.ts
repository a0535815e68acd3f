/**
 * @module Inlining one ONNX model's graph into another: every node, value and
 * initializer name is renamed into a private namespace, so many copies of graphs that
 * use the same names (every expert file calls its weights `w1`, its input `x`) can live
 * side by side in one composed graph.
 *
 * The renaming is total and consistent — graph inputs, outputs, intermediate values,
 * initializers, value infos, node names and the names inside control-flow subgraphs
 * (`If`/`Loop`/`Scan` bodies, which may refer to outer values) all go through one map —
 * so the inlined graph computes exactly what the original did. Only the empty name
 * (an omitted optional input) is kept as it is.
 */
import pkg from "onnx-proto";

const { onnx } = pkg;

type Graph = pkg.onnx.IGraphProto;
type Node = pkg.onnx.INodeProto;

/** What inlining one graph contributes to the composed graph. */
export interface InlinedGraph {
  nodes: Node[];
  initializers: pkg.onnx.ITensorProto[];
  sparseInitializers: pkg.onnx.ISparseTensorProto[];
  valueInfo: pkg.onnx.IValueInfoProto[];
  /** The renamed names of the graph's own (non-initializer) inputs, in order. */
  inputs: string[];
  /** The renamed names of the graph's outputs, in order. */
  outputs: string[];
}

/** `prefix + name` for every non-empty name. */
export function prefixer(prefix: string): (name: string) => string {
  return (name) => (name === "" ? "" : prefix + name);
}

/**
 * The graph's nodes, weights and value infos with every name passed through `rename`.
 * Inputs that are also initializers (IR < 4 files list weights as inputs) are weights,
 * not inputs.
 */
export function inlineGraph(graph: Graph, rename: (name: string) => string): InlinedGraph {
  const initializerNames = new Set((graph.initializer ?? []).map((t) => t.name ?? ""));
  return {
    nodes: (graph.node ?? []).map((node) => renameNode(node, rename)),
    initializers: (graph.initializer ?? []).map((t) => ({ ...t, name: rename(t.name ?? "") })),
    sparseInitializers: (graph.sparseInitializer ?? []).map((s) => renameSparse(s, rename)),
    valueInfo: (graph.valueInfo ?? []).map((v) => ({ ...v, name: rename(v.name ?? "") })),
    inputs: (graph.input ?? [])
      .map((v) => v.name ?? "")
      .filter((name) => !initializerNames.has(name))
      .map(rename),
    outputs: (graph.output ?? []).map((v) => rename(v.name ?? "")),
  };
}

function renameNode(node: Node, rename: (name: string) => string): Node {
  return {
    ...node,
    name: rename(node.name || `${node.opType ?? "node"}:${(node.output ?? []).join(",")}`),
    input: (node.input ?? []).map(rename),
    output: (node.output ?? []).map(rename),
    attribute: (node.attribute ?? []).map((attribute) => {
      if (attribute.g) return { ...attribute, g: renameSubgraph(attribute.g, rename) };
      if (attribute.graphs && attribute.graphs.length > 0) {
        return { ...attribute, graphs: attribute.graphs.map((g) => renameSubgraph(g, rename)) };
      }
      return attribute;
    }),
  };
}

/** A control-flow body: same renaming, its own inputs and outputs included. */
function renameSubgraph(graph: Graph, rename: (name: string) => string): Graph {
  const inlined = inlineGraph(graph, rename);
  return {
    ...graph,
    node: inlined.nodes,
    initializer: inlined.initializers,
    sparseInitializer: inlined.sparseInitializers,
    valueInfo: inlined.valueInfo,
    input: (graph.input ?? []).map((v) => ({ ...v, name: rename(v.name ?? "") })),
    output: (graph.output ?? []).map((v) => ({ ...v, name: rename(v.name ?? "") })),
  };
}

function renameSparse(
  sparse: pkg.onnx.ISparseTensorProto,
  rename: (name: string) => string,
): pkg.onnx.ISparseTensorProto {
  return {
    ...sparse,
    values: sparse.values ? { ...sparse.values, name: rename(sparse.values.name ?? "") } : null,
  };
}

/** Decodes ONNX model bytes; throws a `TypeError` naming `what` when they are not a model. */
export function decodeModel(bytes: Uint8Array, what: string): pkg.onnx.ModelProto {
  let model: pkg.onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (error) {
    throw new TypeError(`Cannot read ${what}: not an ONNX model (${(error as Error).message})`);
  }
  if (!model.graph) throw new TypeError(`Cannot read ${what}: the model has no graph`);
  return model;
}
