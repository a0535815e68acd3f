/** @module Messages between the executor pool (main thread) and its ORT Workers. */
import type { OrtProviderSettings } from "./ort_session_factory.ts";

/** Main thread → worker. */
export type WorkerRequest =
  | {
    type: "load";
    id: number;
    provider: string;
    settings?: OrtProviderSettings;
    parts: { key: string; path: string }[];
  }
  | { type: "unload"; id: number; keys: string[] }
  | { type: "run"; id: number; key: string; input: Float32Array; rows: number };

/** Worker → main thread. */
export type WorkerReply =
  | { type: "done"; id: number; ms: number }
  | { type: "result"; id: number; output: Float32Array; ms: number }
  | { type: "error"; id: number; message: string };
