/**
 * @module The router's residency calls to one backend: `POST /v2/residency/warm`
 * `{parts}` → `{warmed, already_warm, evicted, skipped}` (internal token, per-call limit
 * on the injected clock). Never throws: a failure is a result with `error` set, naming
 * the backend's status or the connection problem, never the token.
 */
import { z } from "zod";
import type { PlanBackend } from "../../shared/placement_plan.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";
import type { ResidencyWarmer, WarmResult } from "./prewarm_types.ts";

/** Options of {@linkcode ResidencyClient}. */
export interface ResidencyClientOptions {
  fetch: FetchLike;
  clock: Clock;
  /** Sent as `authorization: Bearer …` when set. */
  internalToken?: string | undefined;
  /** Limit of one warm call (it loads experts); default 60 000 ms. */
  timeoutMs?: number;
}

const WarmBodySchema = z.object({
  warmed: z.array(z.string()).default([]),
  already_warm: z.array(z.string()).default([]),
  evicted: z.array(z.string()).default([]),
  skipped: z.array(z.string()).default([]),
});

/** Warms parts on backends over HTTP; see the module doc. */
export class ResidencyClient implements ResidencyWarmer {
  readonly #options: ResidencyClientOptions;

  constructor(options: ResidencyClientOptions) {
    this.#options = options;
  }

  async warm(backend: PlanBackend, parts: string[]): Promise<WarmResult> {
    const empty = { warmed: [], alreadyWarm: [], evicted: [], skipped: [] };
    const result = { backend: backend.id, requested: parts };
    const { clock, fetch, internalToken } = this.#options;
    const timeoutMs = this.#options.timeoutMs ?? 60_000;
    const controller = new AbortController();
    let timedOut = false;
    const timer = clock.setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const headers = new Headers({ "content-type": "application/json" });
    if (internalToken !== undefined) headers.set("authorization", `Bearer ${internalToken}`);
    try {
      const response = await fetch(`${backend.url.replace(/\/+$/, "")}/v2/residency/warm`, {
        method: "POST",
        headers,
        body: JSON.stringify({ parts }),
        signal: controller.signal,
      });
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (!response.ok) {
        const message = typeof (body as { error?: unknown })?.error === "string"
          ? `: ${(body as { error: string }).error}`
          : "";
        return { ...result, ...empty, error: `HTTP ${response.status}${message}` };
      }
      const parsed = WarmBodySchema.safeParse(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return {
          ...result,
          ...empty,
          error: `bad answer: ${issue.path.join(".") || "body"}: ${issue.message}`,
        };
      }
      const { warmed, already_warm, evicted, skipped } = parsed.data;
      return { ...result, warmed, alreadyWarm: already_warm, evicted, skipped };
    } catch (error) {
      const reason = timedOut
        ? `timed out after ${timeoutMs} ms`
        : `connection failed: ${error instanceof Error ? error.message : String(error)}`;
      return { ...result, ...empty, error: reason };
    } finally {
      clock.clearTimeout(timer);
    }
  }
}
