/**
 * @module Bounded, zod-validated JSON request bodies for every admin and internal route
 * of router and backend: 413 past the size limit, 400 for invalid JSON, and a 400 that
 * names the offending field (`a.b[0].c`); nesting beyond `MAX_JSON_DEPTH` is refused
 * before parsing.
 */
import type { z } from "zod";
import { ApiError } from "./errors.ts";
import { jsonDepthExceeded, jsonTooDeepMessage, MAX_JSON_DEPTH } from "./json_depth.ts";
import { readLimitedBody } from "./read_body.ts";

/** `a.b[0].c` for a zod issue path. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (name, key) =>
      typeof key === "number" ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key),
    "",
  );
}

/** Options of {@linkcode readJsonBody}. */
export interface JsonBodyOptions {
  /** An empty body reads as `{}` (for routes whose fields are all optional). */
  allowEmpty?: boolean;
}

/** Reads a JSON body under `maxBytes` and validates it; errors say `Cannot <action>: …`. */
export async function readJsonBody<T>(
  request: Request,
  maxBytes: number,
  schema: z.ZodType<T>,
  action: string,
  options: JsonBodyOptions = {},
): Promise<T> {
  const bytes = await readLimitedBody(request, maxBytes);
  // Bounded nesting before anything recursive (JSON.parse, zod) sees the body.
  const tooDeep = jsonDepthExceeded(bytes, MAX_JSON_DEPTH);
  if (tooDeep >= 0) {
    throw new ApiError(
      "bad_request",
      `Cannot ${action}: ${jsonTooDeepMessage(MAX_JSON_DEPTH, tooDeep)}`,
    );
  }
  const text = new TextDecoder().decode(bytes);
  let raw: unknown = {};
  if (!(options.allowEmpty && text.trim() === "")) {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ApiError("bad_request", `Cannot ${action}: body is not valid JSON`);
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ApiError(
      "bad_request",
      `Cannot ${action}: ${fieldName(issue.path) || "body"}: ${issue.message}`,
    );
  }
  return parsed.data;
}
