/**
 * @module Executor Worker: owns onnxruntime sessions by key and runs them one job at a
 * time.
 *
 * `session.run()` blocks its thread, so each Worker is one execution slot. Inputs and
 * outputs cross threads as transferred ArrayBuffers: one message in, one message out
 * per execution.
 */
/// <reference lib="deno.worker" />
import type ort from "onnxruntime-node";
import { createSession } from "./ort_session_factory.ts";
import { runSession } from "./ort_tensors.ts";
import { graphBytes } from "./graph_runner.ts";
import type { WorkerReply, WorkerRequest } from "./worker_protocol.ts";

const sessions = new Map<string, ort.InferenceSession>();

function reply(message: WorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(message, transfer);
}

async function handle(message: WorkerRequest): Promise<void> {
  const started = performance.now();
  switch (message.type) {
    case "load": {
      const bytes = await graphBytes(message.source);
      const session = await createSession(bytes, message.provider, message.settings);
      await sessions.get(message.key)?.release();
      sessions.set(message.key, session);
      reply({ type: "done", id: message.id, ms: performance.now() - started });
      return;
    }
    case "unload": {
      await sessions.get(message.key)?.release();
      sessions.delete(message.key);
      reply({ type: "done", id: message.id, ms: performance.now() - started });
      return;
    }
    case "run": {
      const session = sessions.get(message.key);
      if (!session) throw new Error(`Cannot run "${message.key}": not loaded on this executor`);
      const outputs = await runSession(session, message.feeds, message.outputs);
      reply(
        { type: "result", id: message.id, outputs, ms: performance.now() - started },
        Object.values(outputs).map((o) => o.buffer as ArrayBuffer),
      );
      return;
    }
  }
}

// Jobs are handled strictly one after another: load/unload never interleave with runs.
let chain = Promise.resolve();
self.onmessage = (event: MessageEvent<WorkerRequest>) => {
  const message = event.data;
  chain = chain.then(() => handle(message)).catch((error) => {
    reply({ type: "error", id: message.id, message: (error as Error).message });
  });
};
