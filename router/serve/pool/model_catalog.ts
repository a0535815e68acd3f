/**
 * @module What the router knows about a model: its metadata as a backend serves it
 * and the `d_model` requests are validated against.
 */
import { type ModelMetadata, ModelMetadataSchema } from "../../../shared/oip.ts";

/** Names a client may ask for; anything else is unknown without asking a backend. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** One model of the union catalog. */
export interface CatalogEntry {
  name: string;
  /** Width of a token row: `parameters.d_model`, else `inputs[0].shape[1]`. */
  dModel: number;
  /** Metadata as the backend served it. */
  metadata: ModelMetadata;
}

function positiveInt(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** Validates a backend's metadata answer for `name`; returns the entry or why it is unusable. */
export function catalogEntry(name: string, raw: unknown): CatalogEntry | string {
  const parsed = ModelMetadataSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `metadata ${issue.path.join(".") || "body"}: ${issue.message}`;
  }
  const metadata = parsed.data;
  if (metadata.name !== name) return `metadata names model "${metadata.name}", asked for "${name}"`;
  const dModel = positiveInt(metadata.parameters?.["d_model"]) ??
    positiveInt(metadata.inputs[0]?.shape[1]);
  if (dModel === undefined) return "metadata has neither parameters.d_model nor inputs[0].shape[1]";
  return { name, dModel, metadata };
}

/** Model names a backend announces in its ready `details` (`models: string[]` or `model`). */
export function announcedModels(details: Readonly<Record<string, unknown>> | undefined): string[] {
  if (details === undefined) return [];
  const listed = Array.isArray(details["models"]) ? details["models"] : [details["model"]];
  return listed.filter((name): name is string => typeof name === "string" && MODEL_NAME.test(name));
}
