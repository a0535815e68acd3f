/**
 * @module Runs onnxruntime sessions on the calling thread — the backend's main thread
 * (`backend.executors: 0`, one backend process per core).
 *
 * Why: at the batch sizes a layer executable sees, the main → Worker → main round trip
 * (postMessage, structured clone, two wake-ups: 130–250 µs measured here) costs as much
 * as a small execution; on the main thread an execution costs `session.run()` alone
 * (~17 µs of fixed overhead). The price: while a session runs, the thread serves nothing
 * else, so HTTP work and executions take turns — one process per core keeps every core
 * busy. `deno task bench:baseline` measures both runners side by side.
 *
 * Executions run one at a time in arrival order (one slot); onnxruntime-node defers
 * each `run()` to a `setImmediate`, so I/O callbacks get their turn between executions.
 */
import type ort from "onnxruntime-node";
import { setImmediate } from "node:timers";
import {
  type Feeds,
  graphBytes,
  type GraphRun,
  type GraphRunner,
  type GraphSource,
} from "./graph_runner.ts";
import type { ExecutorStats } from "./executor.ts";
import {
  chooseProvider,
  createSession,
  type OrtProviderSettings,
  type ProviderChoice,
} from "./ort_session_factory.ts";
import { runSession } from "./ort_tensors.ts";

interface Job {
  session: ort.InferenceSession;
  feeds: Feeds;
  outputs: readonly string[];
  rows: number;
  resolve: (run: GraphRun) => void;
  reject: (error: Error) => void;
}

/** Main-thread onnxruntime runner (one slot). */
export class OrtInlineRunner implements GraphRunner {
  readonly provider: string;
  readonly fallbacks: ProviderChoice["fallbacks"];
  readonly slots = 1;
  readonly depth = 1;
  readonly sharedThread = true;
  readonly #sessions = new Map<string, ort.InferenceSession>();
  /** Queued or running jobs per session; a replaced or unloaded session is released at 0. */
  readonly #uses = new Map<ort.InferenceSession, number>();
  readonly #retired = new Set<ort.InferenceSession>();
  readonly #queue: Job[] = [];
  #running = false;
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  readonly #settings: OrtProviderSettings | undefined;

  private constructor(choice: ProviderChoice, settings: OrtProviderSettings | undefined) {
    this.provider = choice.provider;
    this.fallbacks = choice.fallbacks;
    this.#settings = settings;
  }

  /** Picks the first provider of `providers` that can run `probe` (explicit fallback). */
  static async create(
    probe: Uint8Array,
    providers: readonly string[],
    settings?: OrtProviderSettings,
  ): Promise<OrtInlineRunner> {
    return new OrtInlineRunner(await chooseProvider(probe, providers, settings), settings);
  }

  async load(key: string, source: GraphSource): Promise<void> {
    if (this.#closed) throw new Error("Cannot load: runner is closed");
    const bytes = await graphBytes(source);
    const session = await createSession(bytes, this.provider, this.#settings);
    const previous = this.#sessions.get(key);
    this.#sessions.set(key, session);
    if (previous) await this.#retire(previous);
  }

  async unload(key: string): Promise<void> {
    const session = this.#sessions.get(key);
    this.#sessions.delete(key);
    if (session) await this.#retire(session);
  }

  has(key: string): boolean {
    return this.#sessions.has(key);
  }

  run(key: string, feeds: Feeds, outputs: readonly string[], rows: number): Promise<GraphRun> {
    if (this.#closed) return Promise.reject(new Error("Cannot run: runner is closed"));
    const session = this.#sessions.get(key);
    if (!session) return Promise.reject(new Error(`Cannot run "${key}": not loaded`));
    this.#uses.set(session, (this.#uses.get(session) ?? 0) + 1);
    return new Promise((resolve, reject) => {
      this.#queue.push({ session, feeds, outputs, rows, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  stats(): ExecutorStats {
    return {
      slots: 1,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: this.#queue.length,
      running: this.#running ? 1 : 0,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new Error("Cannot run: runner closed"));
    for (const session of this.#sessions.values()) await session.release();
    this.#sessions.clear();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      // onnxruntime-node runs the session in a setImmediate callback queued by run();
      // ours, queued just before it, marks its start, so `ms` excludes the I/O and
      // other callbacks the event loop handles before it gets there.
      let started = performance.now();
      setImmediate(() => started = performance.now());
      try {
        const outputs = await runSession(job.session, job.feeds, job.outputs);
        const ms = performance.now() - started;
        this.#executions++;
        this.#rows += job.rows;
        this.#busyMs += ms;
        job.resolve({ outputs, ms });
      } catch (error) {
        job.reject(error as Error);
      }
      const left = this.#uses.get(job.session)! - 1;
      if (left > 0) this.#uses.set(job.session, left);
      else {
        this.#uses.delete(job.session);
        if (this.#retired.delete(job.session)) await job.session.release();
      }
    }
    this.#running = false;
  }

  /** Releases a session no longer reachable by key, once no job uses it. */
  async #retire(session: ort.InferenceSession): Promise<void> {
    if ((this.#uses.get(session) ?? 0) > 0) this.#retired.add(session);
    else await session.release();
  }
}
