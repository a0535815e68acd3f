/**
 * @module The backend's residency endpoints (internal, behind the internal token like
 * every backend route; the router's pre-warm job drives them):
 *
 * - `POST /v2/residency/warm` `{parts: ["L0/E3", …]}` (priority order, most wanted
 *   first) loads and warms those experts within the memory budget, evicting least
 *   recently used unpinned idle experts as needed → `{warmed, already_warm, evicted,
 *   skipped}` (part keys; `skipped`: did not fit the budget).
 * - `GET /v2/residency` → `{budget_bytes, used_bytes, warm: [{part, bytes,
 *   last_used_ms_ago, pinned}], cold_starts: {part: {count, ms_sum, ms_max}}}`.
 */
import { Hono } from "hono";
import { z } from "zod";
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest, ModelPart } from "../../shared/model_manifest.ts";
import type { PlacementState } from "../placement/placement_state.ts";
import { parsePartKey } from "../../shared/model_manifest.ts";

/** Body of `POST /v2/residency/warm`. */
export const WarmBodySchema = z.object({
  parts: z.array(z.string()).min(1).max(100_000),
});

/** The model part a key names, checked against the manifest; the error names the field. */
export function warmPart(manifest: ModelManifest, key: string, index: number): ModelPart {
  const part = parsePartKey(key);
  const where = `parts.${index}`;
  if (part === undefined) {
    throw new ApiError(
      "bad_request",
      `Cannot warm experts: ${where} must look like "L0/E3", got "${key}"`,
    );
  }
  if (part.layer >= manifest.layers) {
    throw new ApiError(
      "bad_request",
      `Cannot warm experts: ${where} "${key}": the model has ${manifest.layers} layer(s)`,
    );
  }
  const count = part.kind === "expert"
    ? manifest.experts
    : part.kind === "shared"
    ? manifest.shared_experts
    : 1;
  if (part.kind !== "gate" && part.expert >= count) {
    throw new ApiError(
      "bad_request",
      `Cannot warm experts: ${where} "${key}": the model has ${count} ${part.kind} expert(s)`,
    );
  }
  return part;
}

/**
 * The residency endpoints as a Hono app to mount at `/v2/residency` (after the
 * internal-token middleware).
 */
export function residencyRoutes(deps: { placement: PlacementState }): Hono {
  const { placement } = deps;
  const app = new Hono();
  app.get("/", (c) => c.json(placement.residencyReport()));
  app.post("/warm", async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      throw new ApiError("bad_request", "Cannot warm experts: body is not valid JSON");
    }
    const parsed = WarmBodySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ApiError(
        "bad_request",
        `Cannot warm experts: ${issue.path.join(".") || "body"}: ${issue.message}`,
      );
    }
    const parts = parsed.data.parts.map((key, i) => warmPart(placement.manifest, key, i));
    return c.json(await placement.warm(parts));
  });
  return app;
}
