/**
 * @module The `local` scaler: asks the launcher (`deno task start`, `tools/pool/`) to run
 * `target` backend processes under its supervisor and to stop the drained ones it names.
 * The launcher's control API (internal token, loopback):
 *
 * - `PUT {launcher_url}/v2/launcher/backends` `{target, remove, ready_by}` → starts the
 *   missing backends (each supervised: restarted with backoff if it exits), stops those in
 *   `remove` (SIGTERM; the router drained them first) and answers the list below;
 * - `GET {launcher_url}/v2/launcher/backends` → `{target, backends: [{name, url, state,
 *   requested_at, ready_at, scaled}]}`, `state` `starting`, `ready` or `stopping`.
 *
 * The job adds the backends the launcher reports ready to the pool ({@linkcode
 * LauncherScaler.ready}) with the launcher's own request → ready time as their cold start.
 * Failures (the launcher gone, a hang) are outcomes, never exceptions.
 */
import { z } from "zod";
import { callJson } from "../../runtime/call_json.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { ScaledBackend, Scaler, ScaleRequest, ScalerOutcome } from "./prewarm_types.ts";
import { changeOf } from "./scalers.ts";

/** One backend as the launcher lists it. */
export const LauncherBackendSchema = z.object({
  name: z.string(),
  url: z.string(),
  state: z.enum(["starting", "ready", "stopping"]),
  /** When it was asked for / was ready (ms since the epoch, the launcher's clock). */
  requested_at: z.number(),
  ready_at: z.number().nullable(),
  /** Started by a scale request (not one of the pool's first backends). */
  scaled: z.boolean(),
});

/** The launcher's answer to both calls. */
export const LauncherBackendsSchema = z.object({
  target: z.int().min(0),
  backends: z.array(LauncherBackendSchema),
});

/** The launcher's list. */
export type LauncherBackends = z.infer<typeof LauncherBackendsSchema>;

/** Options of {@linkcode LauncherScaler}. */
export interface LauncherScalerOptions {
  /** The launcher's control URL (`prewarm.launcher_url`). */
  url: string;
  fetch: FetchLike;
  clock: Clock;
  /** Internal token the launcher requires. */
  token?: string | undefined;
  /** Limit of one call; default 5000 ms. */
  timeoutMs?: number;
}

/** Starts and stops backend processes through the launcher; see the module doc. */
export class LauncherScaler implements Scaler {
  readonly name = "local";
  readonly acts = true;
  readonly #options: LauncherScalerOptions;
  readonly #seen = new Set<string>();

  constructor(options: LauncherScalerOptions) {
    this.#options = options;
  }

  async scale(request: ScaleRequest): Promise<ScalerOutcome> {
    const answer = await this.#call("PUT", {
      target: request.target,
      remove: request.remove,
      ready_by: request.readyBy,
    });
    if (!answer.ok) {
      return { scaler: this.name, status: "failed", detail: `launcher: ${answer.reason}` };
    }
    const started = answer.list.backends
      .filter((b) => b.state === "starting" && !this.#seen.has(b.url))
      .map((b) => b.url);
    for (const backend of answer.list.backends) this.#seen.add(backend.url);
    return {
      scaler: this.name,
      status: "requested",
      detail: changeOf(request),
      started,
      removed: request.remove,
    };
  }

  /** Backends the launcher started on request and reports ready. */
  async ready(): Promise<ScaledBackend[]> {
    const answer = await this.#call("GET");
    if (!answer.ok) return [];
    return answer.list.backends.flatMap((b) =>
      b.scaled && b.state === "ready" && b.ready_at !== null
        ? [{ url: b.url, requestedAt: b.requested_at, readyAt: b.ready_at }]
        : []
    );
  }

  async #call(
    method: "GET" | "PUT",
    body?: unknown,
  ): Promise<{ ok: true; list: LauncherBackends } | { ok: false; reason: string }> {
    const answer = await callJson(
      this.#options,
      `${this.#options.url.replace(/\/+$/, "")}/v2/launcher/backends`,
      {
        method,
        token: this.#options.token,
        ...(body === undefined ? {} : { body }),
        timeoutMs: this.#options.timeoutMs ?? 5000,
      },
    );
    if (!answer.ok) return answer;
    const parsed = LauncherBackendsSchema.safeParse(answer.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return {
        ok: false,
        reason: `bad answer: ${issue.path.join(".") || "body"}: ${issue.message}`,
      };
    }
    return { ok: true, list: parsed.data };
  }
}
