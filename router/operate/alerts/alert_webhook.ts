/**
 * @module Tells an external receiver about an alert: one JSON POST per fire or resolve
 * to `alerts.webhook`, with a time limit and one retry. Never throws: a failure is
 * logged (the URL's origin only — a path or query may hold a secret) and dropped.
 *
 * Body: `{source: "switchyard", event: "alert", alert: {...}}`, the alert as
 * `GET /api/alerts` shows it. Delivery is at least once — an attempt that timed out may
 * still have arrived — so each POST names its transition in `idempotency-key`
 * (`<alert id>@<fired at>:<state>`, the same on the retry) and its attempt number in
 * `x-switchyard-attempt`; receivers drop repeats of a key.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { alertJson } from "./alert_json.ts";
import type { Alert } from "./alert_types.ts";

/** Options of {@linkcode postAlertWebhook}. */
export interface AlertWebhookOptions {
  url: string;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  /** Limit of each attempt; default 2000 ms. */
  timeoutMs?: number;
  /** Wait before the one retry; default 500 ms. */
  retryDelayMs?: number;
}

/** The webhook body for `alert`. */
export function alertWebhookBody(alert: Alert) {
  return { source: "switchyard", event: "alert", alert: alertJson(alert) };
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid url)";
  }
}

async function attempt(
  body: string,
  headers: Record<string, string>,
  options: AlertWebhookOptions,
): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = options.clock.setTimeout(() => controller.abort(), options.timeoutMs ?? 2000);
  try {
    const response = await options.fetch(options.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
      signal: controller.signal,
    });
    await response.body?.cancel();
    return response.ok ? undefined : `answered ${response.status}`;
  } catch (error) {
    return controller.signal.aborted
      ? `no answer within ${options.timeoutMs ?? 2000} ms`
      : (error as Error).message;
  } finally {
    options.clock.clearTimeout(timer);
  }
}

/** POSTs `alert` to the webhook, retrying once; resolves whether it was delivered. */
export async function postAlertWebhook(
  alert: Alert,
  options: AlertWebhookOptions,
): Promise<boolean> {
  const key = `${alert.id}@${alert.firedAt}:${alert.state}`;
  return await postJson(alertWebhookBody(alert), key, options, {
    alert_id: alert.id,
    state: alert.state,
  });
}

/**
 * POSTs `body` as JSON with `idempotency-key: key`, retrying once; never throws. A
 * failure is logged as "alert webhook failed" with `fields` and the URL's origin.
 */
export async function postJson(
  body: unknown,
  key: string,
  options: AlertWebhookOptions,
  fields: Record<string, unknown>,
): Promise<boolean> {
  const text = JSON.stringify(body);
  const headers = (n: number) => ({ "idempotency-key": key, "x-switchyard-attempt": String(n) });
  let failure = await attempt(text, headers(1), options);
  if (failure !== undefined) {
    await new Promise<void>((resolve) =>
      options.clock.setTimeout(resolve, options.retryDelayMs ?? 500)
    );
    failure = await attempt(text, headers(2), options);
  }
  if (failure === undefined) return true;
  options.logger.warn("alert webhook failed", {
    event: "alert",
    ...fields,
    webhook: origin(options.url),
    reason: failure,
    attempts: 2,
  });
  return false;
}
