/**
 * @module The router's calls to one backend: the readiness check, model metadata and
 * the load report, each bounded by a timeout on the injected clock and authenticated with the internal
 * token when one is configured.
 */
import { type LoadReport, LoadReportSchema } from "../../../shared/load_report.ts";
import { ReadyBodySchema } from "../../../shared/oip.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { type CatalogEntry, catalogEntry } from "./model_catalog.ts";

/** How to reach backends. */
export interface BackendClientOptions {
  fetch: FetchLike;
  clock: Clock;
  /** Per-call limit in ms. */
  timeoutMs: number;
  /** Sent as `authorization: Bearer …` when set. */
  internalToken?: string | undefined;
  /** Aborts every call (the pool stopping). */
  signal?: AbortSignal | undefined;
}

/** Outcome of `GET /v2/health/ready`. */
export type ReadyResult =
  | { ready: true; details: Record<string, unknown> | undefined }
  | {
    ready: false;
    reason: string;
    details: Record<string, unknown> | undefined;
    /** `timeout`: no answer in time; `unreachable`: no connection; `answered`: it said no. */
    failure: "timeout" | "unreachable" | "answered";
  };

/** Outcome of `GET /v2/models/{model}`. */
export type MetadataResult =
  | { kind: "found"; entry: CatalogEntry }
  | { kind: "missing" }
  | { kind: "unreachable"; reason: string }
  | { kind: "error"; reason: string };

/** Outcome of `GET /v2/load`. */
export type LoadReportResult =
  | { kind: "ok"; report: LoadReport }
  | { kind: "error"; reason: string };

/** Headers for a router → backend call. */
export function backendHeaders(internalToken: string | undefined): Headers {
  const headers = new Headers();
  if (internalToken !== undefined) headers.set("authorization", `Bearer ${internalToken}`);
  return headers;
}

type JsonAnswer =
  | { status: number; body: unknown }
  | { error: string; unreachable: boolean; timedOut: boolean };

async function getJson(url: string, options: BackendClientOptions): Promise<JsonAnswer> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = options.clock.setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const signal = options.signal
    ? AbortSignal.any([controller.signal, options.signal])
    : controller.signal;
  try {
    const response = await options.fetch(url, {
      headers: backendHeaders(options.internalToken),
      signal,
    });
    const text = await response.text();
    let body: unknown = undefined;
    try {
      body = JSON.parse(text);
    } catch {
      // A non-JSON body leaves `body` undefined; callers judge by status first.
    }
    return { status: response.status, body };
  } catch (error) {
    if (timedOut) {
      return { error: `timed out after ${options.timeoutMs} ms`, unreachable: false, timedOut };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { error: `connection failed: ${message}`, unreachable: true, timedOut };
  } finally {
    options.clock.clearTimeout(timer);
  }
}

/** Checks `GET {baseUrl}/v2/health/ready`; ready means 200 with `{"ready": true}`. */
export async function checkReady(
  baseUrl: string,
  options: BackendClientOptions,
): Promise<ReadyResult> {
  const answer = await getJson(`${baseUrl}/v2/health/ready`, options);
  if ("error" in answer) {
    const failure = answer.timedOut ? "timeout" : "unreachable";
    return { ready: false, reason: answer.error, details: undefined, failure };
  }
  const parsed = ReadyBodySchema.safeParse(answer.body);
  const details = parsed.success ? parsed.data.details : undefined;
  const no = (reason: string) => ({
    ready: false as const,
    reason,
    details,
    failure: "answered" as const,
  });
  if (answer.status !== 200) return no(`ready check answered ${answer.status}`);
  if (!parsed.success) return no("ready check body is not valid");
  if (!parsed.data.ready) return no("ready check says not ready");
  return { ready: true, details };
}

/** Fetches `GET {baseUrl}/v2/models/{model}`; 404 means the backend does not serve it. */
export async function fetchModelMetadata(
  baseUrl: string,
  model: string,
  options: BackendClientOptions,
): Promise<MetadataResult> {
  const answer = await getJson(`${baseUrl}/v2/models/${encodeURIComponent(model)}`, options);
  if ("error" in answer) {
    return { kind: answer.unreachable ? "unreachable" : "error", reason: answer.error };
  }
  if (answer.status === 404) return { kind: "missing" };
  if (answer.status !== 200) {
    return { kind: "error", reason: `model metadata answered ${answer.status}` };
  }
  const entry = catalogEntry(model, answer.body);
  return typeof entry === "string" ? { kind: "error", reason: entry } : { kind: "found", entry };
}

/** Fetches `GET {baseUrl}/v2/load`, the backend's load report, validated. */
export async function fetchLoadReport(
  baseUrl: string,
  options: BackendClientOptions,
): Promise<LoadReportResult> {
  const answer = await getJson(`${baseUrl}/v2/load`, options);
  if ("error" in answer) return { kind: "error", reason: answer.error };
  if (answer.status !== 200) {
    return { kind: "error", reason: `load report answered ${answer.status}` };
  }
  const parsed = LoadReportSchema.safeParse(answer.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      kind: "error",
      reason: `load report is not valid: ${issue.path.join(".") || "(root)"}: ${issue.message}`,
    };
  }
  return { kind: "ok", report: parsed.data };
}
