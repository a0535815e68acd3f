/**
 * @module Runs onnxruntime sessions in a pool of Deno Workers (`backend.executors ≥ 1`),
 * each holding every loaded session.
 *
 * Design: every Worker is one execution slot and holds the same sessions, so any job
 * can run on any idle slot. Jobs wait in one FIFO on the main thread; a Worker holds at
 * most `PIPELINE_DEPTH` of them (one executing, one in its inbox), so a queue that grows
 * is visible here, never hidden in a Worker's inbox. One message carries a job in (its
 * feeds transferred), one carries the outputs back. Sessions load on one Worker after
 * the other, so a large composed graph being built never stalls every slot at once.
 */
import type { ExecutorStats } from "./executor.ts";
import type { Feeds, GraphRun, GraphRunner, GraphSource } from "./graph_runner.ts";
import {
  chooseProvider,
  type OrtProviderSettings,
  type ProviderChoice,
} from "./ort_session_factory.ts";
import type { WorkerReply, WorkerRequest } from "./worker_protocol.ts";

interface Job {
  key: string;
  feeds: Feeds;
  outputs: readonly string[];
  rows: number;
  resolve: (run: GraphRun) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, (reply: WorkerReply) => void>;
  /** Run jobs sent and not answered yet (at most `PIPELINE_DEPTH`). */
  inFlight: number;
}

/**
 * Jobs a Worker may hold at once: one executing and one waiting in its inbox, so it
 * starts the next job without a round trip to the main thread in between (measured:
 * the round trip is ~250 µs, longer than a small execution).
 */
const PIPELINE_DEPTH = 2;

/** onnxruntime runner over a pool of Workers. */
export class OrtWorkerRunner implements GraphRunner {
  readonly provider: string;
  readonly fallbacks: ProviderChoice["fallbacks"];
  readonly slots: number;
  readonly depth: number;
  readonly sharedThread = false;
  readonly #slots: Slot[];
  readonly #settings: OrtProviderSettings | undefined;
  readonly #queue: Job[] = [];
  readonly #loaded = new Set<string>();
  #nextId = 1;
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  private constructor(
    workers: number,
    choice: ProviderChoice,
    settings: OrtProviderSettings | undefined,
  ) {
    this.provider = choice.provider;
    this.#settings = settings;
    this.fallbacks = choice.fallbacks;
    this.#slots = Array.from({ length: workers }, () => this.#spawn());
    this.slots = workers;
    this.depth = workers * PIPELINE_DEPTH;
  }

  /** Picks a provider for `probe` (explicit fallback) and starts `workers` Workers. */
  static async create(
    probe: Uint8Array,
    providers: readonly string[],
    workers: number,
    settings?: OrtProviderSettings,
  ): Promise<OrtWorkerRunner> {
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(`Cannot start executor Workers: count must be >= 1, got ${workers}`);
    }
    return new OrtWorkerRunner(
      workers,
      await chooseProvider(probe, providers, settings),
      settings,
    );
  }

  async load(key: string, source: GraphSource): Promise<void> {
    if (this.#closed) throw new Error("Cannot load: runner is closed");
    for (const slot of this.#slots) {
      await this.#control(slot, {
        type: "load",
        id: this.#nextId++,
        provider: this.provider,
        ...(this.#settings ? { settings: this.#settings } : {}),
        key,
        source,
      });
    }
    this.#loaded.add(key);
  }

  async unload(key: string): Promise<void> {
    if (!this.#loaded.delete(key)) return;
    await Promise.all(
      this.#slots.map((slot) => this.#control(slot, { type: "unload", id: this.#nextId++, key })),
    );
  }

  has(key: string): boolean {
    return this.#loaded.has(key);
  }

  run(key: string, feeds: Feeds, outputs: readonly string[], rows: number): Promise<GraphRun> {
    if (this.#closed) return Promise.reject(new Error("Cannot run: executor pool is closed"));
    if (!this.#loaded.has(key)) {
      return Promise.reject(new Error(`Cannot run "${key}": not loaded`));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ key, feeds, outputs, rows, resolve, reject });
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
      waiter?.(reply);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      for (const waiter of slot.pending.values()) {
        waiter({ type: "error", id: -1, message: `executor worker crashed: ${event.message}` });
      }
      slot.pending.clear();
    };
    return slot;
  }

  #send(slot: Slot, message: WorkerRequest, transfer: Transferable[] = []): Promise<WorkerReply> {
    return new Promise((resolve) => {
      slot.pending.set(message.id, resolve);
      slot.worker.postMessage(message, transfer);
    });
  }

  async #control(slot: Slot, message: WorkerRequest): Promise<void> {
    const reply = await this.#send(slot, message);
    if (reply.type === "error") throw new Error(reply.message);
  }

  #dispatch(): void {
    // Fill every Worker's first place before any second one.
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
    // Transfer private copies of inputs that are views into larger buffers.
    const feeds: Feeds = {};
    const transfer: ArrayBuffer[] = [];
    for (const [name, feed] of Object.entries(job.feeds)) {
      const whole = feed.data.byteOffset === 0 &&
        feed.data.byteLength === feed.data.buffer.byteLength;
      const data = whole ? feed.data : feed.data.slice();
      feeds[name] = { ...feed, data } as typeof feed;
      if (!transfer.includes(data.buffer as ArrayBuffer)) transfer.push(data.buffer as ArrayBuffer);
    }
    const reply = await this.#send(
      slot,
      { type: "run", id: this.#nextId++, key: job.key, feeds, outputs: job.outputs },
      transfer,
    );
    slot.inFlight--;
    if (reply.type === "result") {
      this.#executions++;
      this.#rows += job.rows;
      this.#busyMs += reply.ms;
      job.resolve({ outputs: reply.outputs, ms: reply.ms });
    } else {
      job.reject(new Error(reply.type === "error" ? reply.message : "unexpected executor reply"));
    }
    this.#dispatch();
  }
}
