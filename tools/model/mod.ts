/** @module Model tooling: the demo generator, ONNX graphs and weights, traffic and reference. */
export * from "./generate.ts";
export * from "./onnx_graphs.ts";
export * from "./onnx_weights.ts";
export * from "./prng.ts";
export * from "./reference.ts";
export * from "./reference_math.ts";
export * from "./traffic.ts";
export * from "./weights.ts";
