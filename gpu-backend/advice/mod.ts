/** @module Gate advice on the backend: recorded inputs, bias evaluation and the live bias. */
export * from "./active_bias.ts";
export * from "./input_recorder.ts";
export * from "./bias_evaluation.ts";
export * from "./advice_routes.ts";
