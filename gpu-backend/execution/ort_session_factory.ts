/**
 * @module Creates onnxruntime sessions with an explicit execution-provider fallback.
 *
 * onnxruntime-node does not fall back by itself: asking for `cuda` where the CUDA
 * libraries are missing throws. We try the configured providers in order and remember
 * which one worked and why the others did not, so the backend can say so.
 *
 * Provider options (`backend.cuda`, `backend.memory_arena`): onnxruntime-node 1.30 passes
 * only `deviceId` to the CUDA provider (its binding builds default CUDA provider options
 * and sets `device_id`; the CUDA arena and IO binding are not reachable from Node), and
 * the host memory arena as `enableCpuMemArena`.
 */
import ort from "onnxruntime-node";

/** Provider options from the backend config. */
export interface OrtProviderSettings {
  /** CUDA device of the sessions (`backend.cuda.device_id`, default 0). */
  cudaDeviceId?: number;
  /** ORT's host memory arena (`backend.memory_arena`, default on). */
  memoryArena?: boolean;
}

/** Session options for `provider` with the settings applied. */
export function sessionOptionsFor(
  provider: string,
  settings: OrtProviderSettings = {},
): ort.InferenceSession.SessionOptions {
  const entry = provider === "cuda"
    ? { name: "cuda" as const, deviceId: settings.cudaDeviceId ?? 0 }
    : provider;
  return {
    executionProviders: [entry],
    enableCpuMemArena: settings.memoryArena ?? true,
  };
}

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
  settings: OrtProviderSettings = {},
): Promise<ProviderChoice> {
  const fallbacks: ProviderChoice["fallbacks"] = [];
  // A missing provider is reported below as a structured fallback, not as native noise.
  ort.env.logLevel = "fatal";
  for (const provider of providers) {
    try {
      const session = await ort.InferenceSession.create(
        probe,
        sessionOptionsFor(provider, settings),
      );
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
export function createSession(
  bytes: Uint8Array,
  provider: string,
  settings: OrtProviderSettings = {},
): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(bytes, {
    ...sessionOptionsFor(provider, settings),
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
}
