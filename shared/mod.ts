/** @module The wire contract shared by router and backend: schemas, types, errors, codecs. */
export * from "./binary_tensor.ts";
export * from "./config.ts";
export * from "./errors.ts";
export * from "./infer_request_codec.ts";
export * from "./infer_response_codec.ts";
export * from "./model_manifest.ts";
export * from "./oip.ts";
export * from "./logger.ts";
export * from "./bearer_token.ts";
export * from "./header_length.ts";
export * from "./read_body.ts";
export * from "./config_file.ts";
export * from "./load_report.ts";
export * from "./placement_plan.ts";
