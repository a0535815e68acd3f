/** @module What the router knows of the model its pool serves (from backends' metadata). */
import type { BackendPool } from "../serve/pool/backend_pool.ts";

/** A numeric parameter of the served model's metadata (`experts`, `d_model`, `top_k`, …). */
export function modelParameter(pool: BackendPool, name: string): number | undefined {
  const [entry] = pool.catalog().values();
  const value = entry?.metadata.parameters?.[name];
  return typeof value === "number" ? value : undefined;
}
