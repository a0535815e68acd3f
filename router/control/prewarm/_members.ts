/** @module Pool-member predicates of the capacity controller. */
import type { BackendRole } from "../../serve/pool/backend_view.ts";

/** Takes new requests. */
export function isActive(m: { role?: BackendRole | undefined }): boolean {
  return (m.role ?? "active") === "active";
}

/** Leaving. */
export function isDraining(m: { role?: BackendRole | undefined }): boolean {
  return m.role === "draining";
}

/** Passed its checks, said its name and described a model. */
export function isReady(
  m: { healthy: boolean; models: readonly string[]; details?: unknown },
): boolean {
  const details = m.details as Record<string, unknown> | undefined;
  return m.healthy && m.models.length > 0 && typeof details?.["backend_id"] === "string";
}

/** The same ids in the same order. */
export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
