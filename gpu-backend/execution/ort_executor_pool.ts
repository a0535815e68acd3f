/**
 * @module The production executor: a pool of Deno Workers, each owning one
 * onnxruntime session per hosted model part.
 *
 * Design: every Worker is one execution slot and holds the same parts, so any job can
 * run on any idle slot. Jobs wait in one FIFO on the main thread and are handed to the
 * first idle Worker; a Worker never has more than one job in flight, so a queue that
 * grows is visible here (and bounded by the caller), never hidden in a Worker's inbox.
 */
import {
  listModelParts,
  type ModelManifest,
  type ModelPart,
  modelPartKey,
  modelPartPath,
} from "../../shared/model_manifest.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "./executor.ts";
import {
  chooseProvider,
  type OrtProviderSettings,
  type ProviderChoice,
} from "./ort_session_factory.ts";
import type { WorkerReply, WorkerRequest } from "./worker_protocol.ts";
import { join } from "node:path";

/** Options of {@linkcode OrtExecutorPool.create}. */
export interface OrtExecutorPoolOptions {
  modelDir: string;
  manifest: ModelManifest;
  /** Worker count (execution slots). */
  workers: number;
  /** Providers in order of preference, e.g. `["cuda", "cpu"]`. */
  providers: readonly string[];
  /** Provider options (CUDA device, memory arena). */
  providerSettings?: OrtProviderSettings;
  /** Parts to load at start; default every part of the model. */
  parts?: readonly ModelPart[];
}

interface Job {
  key: string;
  input: Float32Array;
  rows: number;
  resolve: (execution: Execution) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (reply: WorkerReply) => void }>;
  /** Run jobs sent and not answered yet (at most `PIPELINE_DEPTH`). */
  inFlight: number;
}

/**
 * Jobs a Worker may hold at once: one executing and one waiting in its inbox, so it
 * starts the next job without a round trip to the main thread in between (measured:
 * the round trip is ~250 µs, longer than a small expert execution).
 */
const PIPELINE_DEPTH = 2;

/** onnxruntime executor over a pool of Workers. */
export class OrtExecutorPool implements ExpertExecutor {
  readonly provider: string;
  readonly slots: number;
  readonly depth: number;
  /** Providers that failed before {@linkcode provider} worked, with reasons. */
  readonly fallbacks: ProviderChoice["fallbacks"];
  readonly #modelDir: string;
  readonly #manifest: ModelManifest;
  readonly #settings: OrtProviderSettings | undefined;
  readonly #slots: Slot[];
  readonly #queue: Job[] = [];
  readonly #loaded = new Set<string>();
  #nextId = 1;
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  private constructor(options: OrtExecutorPoolOptions, choice: ProviderChoice) {
    this.provider = choice.provider;
    this.fallbacks = choice.fallbacks;
    this.#modelDir = options.modelDir;
    this.#settings = options.providerSettings;
    this.#manifest = options.manifest;
    this.#slots = Array.from({ length: options.workers }, () => this.#spawn());
    this.slots = options.workers;
    this.depth = options.workers * PIPELINE_DEPTH;
  }

  /** Picks a provider (with explicit fallback), starts the Workers and loads the parts. */
  static async create(options: OrtExecutorPoolOptions): Promise<OrtExecutorPool> {
    const probePath = join(
      options.modelDir,
      modelPartPath(options.manifest, { kind: "gate", layer: 0 }),
    );
    const choice = await chooseProvider(
      await Deno.readFile(probePath),
      options.providers,
      options.providerSettings,
    );
    const pool = new OrtExecutorPool(options, choice);
    try {
      await pool.load(options.parts ?? listModelParts(options.manifest));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  /** Loads parts on every Worker (no-op for parts already loaded). */
  async load(parts: readonly ModelPart[]): Promise<void> {
    const missing = parts.filter((part) => !this.#loaded.has(modelPartKey(part)));
    if (missing.length === 0) return;
    const entries = missing.map((part) => ({
      key: modelPartKey(part),
      path: join(this.#modelDir, modelPartPath(this.#manifest, part)),
    }));
    await Promise.all(
      this.#slots.map((slot) =>
        this.#control(slot, {
          type: "load",
          id: this.#nextId++,
          provider: this.provider,
          ...(this.#settings ? { settings: this.#settings } : {}),
          parts: entries,
        })
      ),
    );
    for (const entry of entries) this.#loaded.add(entry.key);
  }

  /** Releases the sessions of parts on every Worker. */
  async unload(parts: readonly ModelPart[]): Promise<void> {
    const keys = parts.map(modelPartKey).filter((key) => this.#loaded.has(key));
    if (keys.length === 0) return;
    for (const key of keys) this.#loaded.delete(key);
    await Promise.all(
      this.#slots.map((slot) => this.#control(slot, { type: "unload", id: this.#nextId++, keys })),
    );
  }

  /** Whether a part is loaded. */
  isLoaded(part: ModelPart): boolean {
    return this.#loaded.has(modelPartKey(part));
  }

  execute(part: ModelPart, input: Float32Array, rows: number): Promise<Execution> {
    if (this.#closed) return Promise.reject(new Error("Cannot run: executor pool is closed"));
    const key = modelPartKey(part);
    if (!this.#loaded.has(key)) {
      return Promise.reject(new Error(`Cannot run "${key}": part is not loaded`));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, input, rows, resolve, reject });
      this.#dispatch();
    });
  }

  stats(): ExecutorStats {
    return {
      slots: this.#slots.length,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: this.#queue.length,
      running: this.#slots.reduce((sum, slot) => sum + slot.inFlight, 0),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) {
      job.reject(new Error("Cannot run: executor pool closed"));
    }
    for (const slot of this.#slots) slot.worker.terminate();
    await Promise.resolve();
  }

  #spawn(): Slot {
    const worker = new Worker(new URL("./ort_worker.ts", import.meta.url), { type: "module" });
    const slot: Slot = { worker, pending: new Map(), inFlight: 0 };
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data;
      const waiter = slot.pending.get(reply.id);
      slot.pending.delete(reply.id);
      waiter?.resolve(reply);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      for (const waiter of slot.pending.values()) {
        waiter.resolve({
          type: "error",
          id: -1,
          message: `executor worker crashed: ${event.message}`,
        });
      }
      slot.pending.clear();
    };
    return slot;
  }

  #send(slot: Slot, message: WorkerRequest, transfer: Transferable[] = []): Promise<WorkerReply> {
    return new Promise((resolve) => {
      slot.pending.set(message.id, { resolve });
      slot.worker.postMessage(message, transfer);
    });
  }

  async #control(slot: Slot, message: WorkerRequest): Promise<void> {
    const reply = await this.#send(slot, message);
    if (reply.type === "error") throw new Error(reply.message);
  }

  #dispatch(): void {
    // Fill every Worker's first place before any second one, least loaded first.
    for (let depth = 0; depth < PIPELINE_DEPTH; depth++) {
      for (const slot of this.#slots) {
        if (this.#queue.length === 0) return;
        if (slot.inFlight > depth) continue;
        slot.inFlight++;
        void this.#execute(slot, this.#queue.shift()!);
      }
    }
  }

  async #execute(slot: Slot, job: Job): Promise<void> {
    // Transfer a private copy when the input is a view into a larger buffer.
    const input = job.input.byteOffset === 0 && job.input.byteLength === job.input.buffer.byteLength
      ? job.input
      : job.input.slice();
    const reply = await this.#send(
      slot,
      { type: "run", id: this.#nextId++, key: job.key, input, rows: job.rows },
      [input.buffer as ArrayBuffer],
    );
    slot.inFlight--;
    if (reply.type === "result") {
      this.#executions++;
      this.#rows += job.rows;
      this.#busyMs += reply.ms;
      job.resolve({ output: reply.output, ms: reply.ms });
    } else {
      job.reject(new Error(reply.type === "error" ? reply.message : "unexpected executor reply"));
    }
    this.#dispatch();
  }
}
