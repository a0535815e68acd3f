/**
 * @module Picks the log store the configuration asks for: Loki when `loki.url` is set,
 * else the local files under `log.dir`.
 */
import type { Config } from "../../../shared/config.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { LocalLogStore } from "./local_log_store.ts";
import type { LogStore } from "./log_store.ts";
import { LokiLogStore } from "./loki_log_store.ts";

/** The store for `config`; `fetch` is used for Loki (default: the global `fetch`). */
export function createLogStore(
  config: Pick<Config, "log" | "loki">,
  options: { fetch?: FetchLike } = {},
): LogStore {
  if (config.loki.url) {
    return new LokiLogStore({
      url: config.loki.url,
      tenant: config.loki.tenant,
      timeoutMs: config.loki.timeout,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }
  return new LocalLogStore({ dir: config.log.dir });
}
