/**
 * @module The advisor's calls to backends about the routing-only bias: ask one backend
 * to evaluate a fitted bias on its recorded inputs (`POST /v2/advice/gate-bias`), and
 * set or clear the bias on every backend (`PUT /v2/gate/bias`). Internal token sent
 * when configured; errors name the backend, never the token.
 */
import { z } from "zod";
import { backendHeaders } from "../../serve/pool/backend_client.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { BiasEvaluation } from "./gate_advice.ts";

const EvaluationSchema = z.object({
  rows: z.int().min(0),
  layers: z.array(z.object({
    layer: z.int().min(0),
    balancedness_before: z.number(),
    balancedness_after: z.number(),
    bias: z.array(z.number()),
  })),
  output_deviation: z.object({ relative_l2: z.number(), max_abs: z.number() }),
  selection_changed: z.number(),
});

/** Options of the bias calls. */
export interface BiasClientOptions {
  fetch: FetchLike;
  internalToken: string | undefined;
  /** Per call; default 60 000 ms (an evaluation runs the model twice on the samples). */
  timeoutMs?: number;
}

async function call(
  url: string,
  method: "POST" | "PUT",
  body: unknown,
  options: BiasClientOptions,
): Promise<unknown> {
  const headers = backendHeaders(options.internalToken);
  headers.set("content-type", "application/json");
  const response = await options.fetch(url, {
    method,
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
  });
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = JSON.parse(text).error ?? text;
    } catch { /* not JSON: keep the text */ }
    throw new Error(`HTTP ${response.status}: ${message}`);
  }
  return JSON.parse(text);
}

/** Asks `backend` to fit and evaluate a routing-only bias on its recorded inputs. */
export async function evaluateBias(
  backend: { name: string; url: string },
  options: BiasClientOptions,
): Promise<BiasEvaluation | { error: string }> {
  try {
    const raw = await call(`${backend.url}/v2/advice/gate-bias`, "POST", {}, options);
    const parsed = EvaluationSchema.parse(raw);
    return {
      backend: backend.name,
      rows: parsed.rows,
      layers: parsed.layers.map((l) => ({
        layer: l.layer,
        balancednessBefore: l.balancedness_before,
        balancednessAfter: l.balancedness_after,
        bias: l.bias,
      })),
      outputRelativeL2: parsed.output_deviation.relative_l2,
      outputMaxAbs: parsed.output_deviation.max_abs,
      selectionChanged: parsed.selection_changed,
    };
  } catch (error) {
    return { error: `cannot evaluate a bias on ${backend.name}: ${(error as Error).message}` };
  }
}

/** Sets (or clears, with `null`) the routing-only bias on every backend. */
export async function setBias(
  backends: readonly { name: string; url: string }[],
  bias: number[][] | null,
  options: BiasClientOptions,
): Promise<{ backend: string; ok: boolean; error?: string }[]> {
  return await Promise.all(backends.map(async (backend) => {
    try {
      await call(`${backend.url}/v2/gate/bias`, "PUT", { bias }, options);
      return { backend: backend.name, ok: true };
    } catch (error) {
      return { backend: backend.name, ok: false, error: (error as Error).message };
    }
  }));
}
