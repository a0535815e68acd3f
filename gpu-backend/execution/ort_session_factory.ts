/**
 * @module Creates onnxruntime sessions with an explicit execution-provider fallback.
 *
 * onnxruntime-node does not fall back by itself: asking for `cuda` where the CUDA
 * libraries are missing throws. We try the configured providers in order and remember
 * which one worked and why the others did not, so the backend can say so.
 */
import ort from "onnxruntime-node";

/** Outcome of picking a provider. */
export interface ProviderChoice {
  provider: string;
  /** Why earlier providers were skipped (empty when the first one worked). */
  fallbacks: { provider: string; reason: string }[];
}

/** Picks the first provider in `providers` that can create a session for `probe`. */
export async function chooseProvider(
  probe: Uint8Array,
  providers: readonly string[],
): Promise<ProviderChoice> {
  const fallbacks: ProviderChoice["fallbacks"] = [];
  // A missing provider is reported below as a structured fallback, not as native noise.
  ort.env.logLevel = "fatal";
  for (const provider of providers) {
    try {
      const session = await ort.InferenceSession.create(probe, {
        executionProviders: [provider],
      });
      await session.release();
      return { provider, fallbacks };
    } catch (error) {
      fallbacks.push({ provider, reason: (error as Error).message.split("\n")[0] ?? "unknown" });
    }
  }
  throw new Error(
    `Cannot create an ONNX session: no execution provider worked (${
      fallbacks.map((f) => `${f.provider}: ${f.reason}`).join("; ")
    })`,
  );
}

/** Creates a session on the given provider. */
export function createSession(bytes: Uint8Array, provider: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(bytes, {
    executionProviders: [provider],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
}
