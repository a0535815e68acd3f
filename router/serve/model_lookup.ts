/**
 * @module The model a request names, looked up in the pool's catalog (asking backends when
 * it is not there yet), and the version check of OIP v2's versioned paths.
 */
import { ApiError } from "../../shared/errors.ts";
import { noHealthyBackend } from "./forward/forward_infer.ts";
import type { BackendPool } from "./pool/backend_pool.ts";
import type { CatalogEntry } from "./pool/model_catalog.ts";

/** The catalog entry for `name`, asking backends if needed; 404, or 503 when none is healthy. */
export async function resolveModel(pool: BackendPool, name: string): Promise<CatalogEntry> {
  const entry = pool.model(name) ?? await pool.discoverModel(name);
  if (entry !== undefined) return entry;
  if (pool.healthyCount() === 0) throw noHealthyBackend(name);
  throw new ApiError("not_found", `Cannot find model "${name}": no backend serves it`);
}

/** 404 unless the pool serves `version` of the model. */
export function requireVersion(pool: BackendPool, entry: CatalogEntry, version: string): void {
  const versions = pool.modelVersions(entry.name);
  if (!versions.includes(version)) {
    throw new ApiError(
      "not_found",
      `Cannot find model "${entry.name}" version "${version}": the pool serves ${
        versions.map((v) => `"${v}"`).join(", ") || "no version"
      }`,
    );
  }
}
