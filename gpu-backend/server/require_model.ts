/**
 * @module The backend's model check on `/v2/models/{model}[/versions/{v}]…` paths: 404
 * unless the path names the one model this backend serves (and, when given, its version).
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";

/** 404 unless the path names this backend's model (and, when given, its version). */
export function requireModel(
  manifest: ModelManifest,
  c: { req: { param(name: string): string | undefined } },
): void {
  const name = c.req.param("model");
  if (name !== manifest.name) {
    throw new ApiError(
      "not_found",
      `Cannot find model "${name}": this backend serves "${manifest.name}"`,
    );
  }
  const version = c.req.param("version");
  if (version !== undefined && version !== manifest.version) {
    throw new ApiError(
      "not_found",
      `Cannot find model "${name}" version "${version}": this backend serves version "${manifest.version}"`,
    );
  }
}
