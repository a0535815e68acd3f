/** @module Messages between the Worker runner (main thread) and its onnxruntime Workers. */
import type { Feeds, GraphSource } from "./graph_runner.ts";
import type { OrtProviderSettings } from "./ort_session_factory.ts";

/** Main thread → worker. */
export type WorkerRequest =
  | {
    type: "load";
    id: number;
    provider: string;
    settings?: OrtProviderSettings;
    key: string;
    source: GraphSource;
  }
  | { type: "unload"; id: number; key: string }
  | { type: "run"; id: number; key: string; feeds: Feeds; outputs: readonly string[] };

/** Worker → main thread. */
export type WorkerReply =
  | { type: "done"; id: number; ms: number }
  | { type: "result"; id: number; outputs: Record<string, Float32Array>; ms: number }
  | { type: "error"; id: number; message: string };
