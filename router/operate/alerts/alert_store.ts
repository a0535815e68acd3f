/**
 * @module Alert records in Deno KV under `["alerts", id]`: the latest record of each
 * condition (firing, or resolved with its times), for tools and other routers to read.
 * Best effort: a failed write is logged once per failure streak and never reaches the
 * caller. Resolved records expire after `resolvedTtlMs` (default 7 days).
 */
import type { Logger } from "../../../shared/logger.ts";
import { withKvRetry } from "../../control/state/kv_retry.ts";
import type { Alert } from "./alert_types.ts";

/** Key prefix of alert records. */
export const ALERTS_PREFIX = ["alerts"] as const;

/** Options of {@linkcode AlertStore}. */
export interface AlertStoreOptions {
  logger: Logger;
  /** Lifetime of a resolved record; default 7 days. */
  resolvedTtlMs?: number;
}

/** Writes alert records; see the module doc. */
export class AlertStore {
  readonly #kv: Deno.Kv;
  readonly #options: AlertStoreOptions;
  #failing = false;

  constructor(kv: Deno.Kv, options: AlertStoreOptions) {
    this.#kv = kv;
    this.#options = options;
  }

  /** Stores `alert` as the record of its condition; never rejects. */
  async save(alert: Alert): Promise<void> {
    try {
      const ttl = this.#options.resolvedTtlMs ?? 7 * 24 * 3600_000;
      await withKvRetry(() =>
        this.#kv.set(
          [...ALERTS_PREFIX, alert.id],
          alert,
          alert.state === "resolved" ? { expireIn: ttl } : {},
        )
      );
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        this.#options.logger.warn("alert record not saved", {
          event: "alert",
          alert_id: alert.id,
          error: (error as Error).message,
        });
      }
      this.#failing = true;
    }
  }

  /** Every stored record. */
  async list(): Promise<Alert[]> {
    const records: Alert[] = [];
    for await (const entry of this.#kv.list<Alert>({ prefix: [...ALERTS_PREFIX] })) {
      records.push(entry.value);
    }
    return records;
  }
}
