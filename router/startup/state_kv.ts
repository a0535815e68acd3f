/**
 * @module The router's Deno KV (plans, load history, traffic series, events, alerts):
 * the one the caller passes, else `state.kv` opened here — a local SQLite file (its
 * directory created), `:memory:`, a KV Connect URL, or `deploy`: Deno Deploy's managed
 * KV, which only `Deno.openKv()` with no argument reaches. Without KV the router still
 * routes; the features that keep state are off, and a warning says so.
 */
import { dirname } from "node:path";
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";

/** The KV store, and whether the router owns (closes) it. */
export interface StateKv {
  kv: Deno.Kv;
  owned: boolean;
}

/** Opens the state KV; `undefined` (logged) when it cannot be opened. */
export async function openStateKv(
  config: Config,
  provided: Deno.Kv | undefined,
  logger: Logger,
): Promise<StateKv | undefined> {
  if (provided !== undefined) return { kv: provided, owned: false };
  const location = config.state.kv;
  if (location === "deploy") {
    try {
      return { kv: await Deno.openKv(), owned: true };
    } catch (error) {
      logger.warn("state disabled (plans, history, series): cannot open Deno KV", {
        kv: location,
        error: (error as Error).message,
      });
      return undefined;
    }
  }
  try {
    // An embedded file needs its directory; `:memory:` and KV Connect URLs do not.
    if (location !== ":memory:" && !/^https?:\/\//.test(location)) {
      await Deno.mkdir(dirname(location), { recursive: true });
    }
    return { kv: await Deno.openKv(location), owned: true };
  } catch (error) {
    logger.warn("state disabled (plans, history, series): cannot open Deno KV", {
      kv: location,
      error: (error as Error).message,
    });
    return undefined;
  }
}
