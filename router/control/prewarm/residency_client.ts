/**
 * @module The router's residency calls to one backend: `POST /v2/residency/warm`
 * `{parts}` → `{warmed, already_warm, evicted, skipped}` (internal token, per-call limit
 * on the injected clock). Never throws: a failure is a result with `error` set, naming
 * the backend's status or the connection problem, never the token.
 */
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import { WarmAnswerSchema } from "../../../shared/residency_api.ts";
import { callJson } from "../../runtime/call_json.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
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

/** Warms parts on backends over HTTP; see the module doc. */
export class ResidencyClient implements ResidencyWarmer {
  readonly #options: ResidencyClientOptions;

  constructor(options: ResidencyClientOptions) {
    this.#options = options;
  }

  async warm(backend: PlanBackend, parts: string[]): Promise<WarmResult> {
    const empty = { warmed: [], alreadyWarm: [], evicted: [], skipped: [] };
    const result = { backend: backend.id, requested: parts };
    const answer = await callJson(
      this.#options,
      `${backend.url.replace(/\/+$/, "")}/v2/residency/warm`,
      {
        method: "POST",
        token: this.#options.internalToken,
        body: { parts },
        timeoutMs: this.#options.timeoutMs ?? 60_000,
      },
    );
    if (!answer.ok) return { ...result, ...empty, error: answer.reason };
    const parsed = WarmAnswerSchema.safeParse(answer.body);
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
  }
}
