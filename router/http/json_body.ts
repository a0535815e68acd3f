/**
 * @module Bounded, zod-validated JSON request bodies for the router's admin and API
 * routes: a 400 that names the offending field (`a.b[0].c`).
 */
import type { z } from "zod";
import { ApiError } from "../../shared/errors.ts";
import { readLimitedBody } from "../../shared/read_body.ts";

/** `a.b[0].c` for a zod issue path. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (name, key) =>
      typeof key === "number" ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key),
    "",
  );
}

/** Reads a JSON body under `maxBytes` and validates it; 400 names the field. */
export async function readJsonBody<T>(
  request: Request,
  maxBytes: number,
  schema: z.ZodType<T>,
  action: string,
): Promise<T> {
  const text = new TextDecoder().decode(await readLimitedBody(request, maxBytes));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError("bad_request", `Cannot ${action}: body is not valid JSON`);
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
