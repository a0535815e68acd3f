/**
 * @module The pool id: the name of the shared state that steers one backend pool, sent
 * with every plan call (`shared/plan_owner.ts`) so backends follow one controller. Routers
 * on one KV share it: the first to start stores a random one at `["pool", "id"]` (atomic,
 * so racing routers agree), later ones read it. `state.pool_id` pins it instead (a
 * launcher whose router keeps state in memory across restarts). Without KV every start
 * gets a new one — such a router can steer only backends nobody else claimed.
 */
import { withKvRetry } from "../state/kv_retry.ts";

/** Where the pool id is kept. */
export const POOL_ID_KEY: Deno.KvKey = ["pool", "id"];

/** A fresh random pool id. */
export function newPoolId(): string {
  return `pool-${crypto.randomUUID().slice(0, 8)}`;
}

/** The pool id: `configured`, else the one stored in `kv` (stored now if none), else a new one. */
export async function resolvePoolId(
  kv: Deno.Kv | undefined,
  configured: string | undefined,
): Promise<string> {
  if (configured !== undefined) return configured;
  if (kv === undefined) return newPoolId();
  return await withKvRetry(async () => {
    for (;;) {
      const entry = await kv.get<string>(POOL_ID_KEY);
      if (typeof entry.value === "string") return entry.value;
      const id = newPoolId();
      const stored = await kv.atomic().check(entry).set(POOL_ID_KEY, id).commit();
      if (stored.ok) return id;
    }
  });
}
