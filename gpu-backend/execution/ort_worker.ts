/**
 * @module Executor Worker: owns onnxruntime sessions and runs them one job at a time.
 *
 * `session.run()` blocks its thread, so each Worker is one execution slot. Inputs and
 * outputs cross threads as transferred ArrayBuffers.
 */
/// <reference lib="deno.worker" />
import ort from "onnxruntime-node";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import { createSession } from "./ort_session_factory.ts";
import type { WorkerReply, WorkerRequest } from "./worker_protocol.ts";

const sessions = new Map<string, ort.InferenceSession>();

function reply(message: WorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(message, transfer);
}

async function handle(message: WorkerRequest): Promise<void> {
  const started = performance.now();
  switch (message.type) {
    case "load": {
      for (const part of message.parts) {
        if (sessions.has(part.key)) continue;
        const bytes = await Deno.readFile(part.path);
        sessions.set(part.key, await createSession(bytes, message.provider, message.settings));
      }
      reply({ type: "done", id: message.id, ms: performance.now() - started });
      return;
    }
    case "unload": {
      for (const key of message.keys) {
        await sessions.get(key)?.release();
        sessions.delete(key);
      }
      reply({ type: "done", id: message.id, ms: performance.now() - started });
      return;
    }
    case "run": {
      const session = sessions.get(message.key);
      if (!session) throw new Error(`Cannot run "${message.key}": not loaded on this executor`);
      const cols = message.input.length / message.rows;
      const feeds = {
        [ONNX_INPUT_NAME]: new ort.Tensor("float32", message.input, [message.rows, cols]),
      };
      const result = await session.run(feeds);
      const output = result[ONNX_OUTPUT_NAME]!.data as Float32Array;
      const copy = output.byteOffset === 0 && output.byteLength === output.buffer.byteLength
        ? output
        : output.slice();
      reply({ type: "result", id: message.id, output: copy, ms: performance.now() - started }, [
        copy.buffer as ArrayBuffer,
      ]);
      return;
    }
  }
}

// Jobs are handled strictly one after another: the pool never sends a second job
// before the first answered, and load/unload must not interleave with runs.
let chain = Promise.resolve();
self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const message = event.data;
  chain = chain.then(() => handle(message)).catch((error) => {
    reply({ type: "error", id: message.id, message: (error as Error).message });
  });
};
