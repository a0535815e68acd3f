/**
 * @module KServe Open Inference Protocol v2 wire schemas (JSON form and the
 * binary-tensor extension's JSON header).
 *
 * Spec: https://kserve.github.io/website/docs/concepts/architecture/data-plane/v2-protocol
 */
import { z } from "zod";

/** Tensor datatypes Switchyard reads or writes. */
export const DatatypeSchema = z.enum(["FP32", "INT32", "FP64", "INT64", "BYTES", "BOOL"]);

/** Parameters object on requests, tensors and responses. */
export const ParametersSchema = z.record(z.string(), z.unknown());

/** One input tensor of an inference request. */
export const RequestInputSchema = z.object({
  name: z.string().min(1),
  shape: z.array(z.int().min(0)),
  datatype: z.string(),
  parameters: ParametersSchema.optional(),
  /** Flat or nested values; checked value by value by the decoder for a precise message. */
  data: z.array(z.unknown()).optional(),
});

/** One requested output of an inference request. */
export const RequestOutputSchema = z.object({
  name: z.string().min(1),
  parameters: ParametersSchema.optional(),
});

/** An inference request (`POST /v2/models/{model}/infer`). */
export const InferRequestSchema = z.object({
  id: z.string().max(256).optional(),
  parameters: ParametersSchema.optional(),
  inputs: z.array(RequestInputSchema).min(1),
  outputs: z.array(RequestOutputSchema).optional(),
});

/** The JSON body (or binary header) of an inference request. */
export type InferRequest = z.infer<typeof InferRequestSchema>;

/** One output tensor of an inference response. */
export const ResponseOutputSchema = z.object({
  name: z.string(),
  shape: z.array(z.int()),
  datatype: DatatypeSchema,
  parameters: ParametersSchema.optional(),
  data: z.array(z.number()).optional(),
});

/** An inference response. */
export const InferResponseSchema = z.object({
  model_name: z.string(),
  model_version: z.string().optional(),
  id: z.string().optional(),
  parameters: ParametersSchema.optional(),
  outputs: z.array(ResponseOutputSchema),
});

/** The JSON body (or binary header) of an inference response. */
export type InferResponse = z.infer<typeof InferResponseSchema>;

/** Tensor metadata in model metadata responses. */
export const TensorMetadataSchema = z.object({
  name: z.string(),
  datatype: DatatypeSchema,
  shape: z.array(z.int()),
});

/** `GET /v2/models/{model}` response. */
export const ModelMetadataSchema = z.object({
  name: z.string(),
  versions: z.array(z.string()).optional(),
  platform: z.string(),
  inputs: z.array(TensorMetadataSchema),
  outputs: z.array(TensorMetadataSchema),
  parameters: ParametersSchema.optional(),
});

/** Model metadata as served by backends and the router. */
export type ModelMetadata = z.infer<typeof ModelMetadataSchema>;

/** `GET /v2/health/ready` body; `details` is Switchyard's extension. */
export const ReadyBodySchema = z.object({
  ready: z.boolean(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** Name of the single input tensor of a Switchyard MoE model. */
export const INPUT_TENSOR = "input";
/** Name of the hidden-state output tensor. */
export const OUTPUT_TENSOR = "output";
/** Optional output: selected expert ids, INT32 `[layers, tokens, top_k]`. */
export const EXPERT_IDS_TENSOR = "expert_ids";
/** Optional output: combine weights, FP32 `[layers, tokens, top_k]`. */
export const EXPERT_WEIGHTS_TENSOR = "expert_weights";
/** Every output a model serves, in metadata order. */
export const OUTPUT_TENSORS = [OUTPUT_TENSOR, EXPERT_IDS_TENSOR, EXPERT_WEIGHTS_TENSOR] as const;
/** Request header carrying the binary extension's JSON header length. */
export const HEADER_LENGTH_HEADER = "inference-header-content-length";
/** Request header labelling traffic when `parameters.request_type` is absent. */
export const REQUEST_TYPE_HEADER = "x-request-type";
