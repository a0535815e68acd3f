/**
 * @module A SIMULATED graph runner for the layer path. ITS LAYER OUTPUTS ARE NOT MODEL
 * OUTPUTS. With `backend.executor: simulated` (benchmarks only) the backend runs the
 * production layer path — layer executables, layer batcher, dispatcher, peer channel,
 * overlap — on this runner, and each backend behaves as one dedicated accelerator.
 *
 * What runs for real, and why:
 * - Gates, the graphs given as a file (`LayerExecutables` loads each layer's `gate.onnx`
 *   under `gateKey(layer)`), and the next gate fused into a layer executable: onnxruntime
 *   on the calling thread, one intra-op thread. Routing must follow the model's own gate,
 *   or the bestsellers and their shifts (`deno task gen-model --preset bench`) would not
 *   be the model's: with onnxruntime the logits are the very ones an onnxruntime backend
 *   computes (no second implementation to keep equal), and a `[d, E]` MatMul per row
 *   (256 × 256: ~65 k multiply-adds) costs microseconds, where a TypeScript loop would
 *   cost ten times more host CPU on a machine that runs many backends.
 * - Layer executables (`compose_layer.ts`): NOT run, so not even composed
 *   (`needsGraphBytes` false: `LayerExecutables` passes the size the graph would have).
 *   Loading one takes `loadFixedMs + loadMsPerMb · MiB` of timer time (no device time),
 *   as the simulated executor's loads.
 *
 * Device time. Every execution occupies one of the backend's {@linkcode SimulatedDevices}
 * (one per backend: a dedicated accelerator) for
 * `fixedMs + perExpertMs · touched + perRowMs · workRows`, where `touched` is the routed
 * experts with rows in a layer execution (each streams its weights once) and `workRows`
 * is in expert-row units — what a real device computes:
 * - layer execution: `N` routed assignments (one expert MLP row each) + `M · S` (the `M`
 *   entry rows through each of the `S` shared experts) + `M · E / (2·d_ff)` when the next
 *   gate is fused and its logits asked for (a gate row is a `[d, E]` projection against an
 *   expert's `[d, d_ff]` + `[d_ff, d]`: the unit `layer_counters.ts` splits time by);
 *   peer rows count only through their assignments;
 * - stand-alone gate: `rows · E / (2·d_ff)`.
 * `calibrate_layer.ts` measures the three from a composed layer graph on onnxruntime with
 * the same `touched` and `workRows`.
 *
 * Outputs of a layer execution (`LAYER_IO` of `compose_layer.ts`, same shapes): every
 * routed expert is the same stand-in `expert(x) = 0.01 · x`, every shared expert
 * `0.005 · x`, so
 *   routed[r] = 0.01 · (Σ weights of r's assignments) · rows[r]
 *   hidden[m] = residual[m] + routed[m] + 0.005 · S · rows[m]
 *   logits    = the real next gate on hidden.
 * The stand-in does not depend on which experts (or which backend) computed a row, so a
 * token answers the same whatever the placement (up to float rounding), and hidden stays
 * ≈ the token: each later layer's real gate still sees its request type's direction.
 */
import type ort from "onnxruntime-node";
import {
  type ModelManifest,
  ONNX_INPUT_NAME,
  ONNX_OUTPUT_NAME,
} from "../../shared/model_manifest.ts";
import type { Feed, Feeds, GraphRun, GraphRunner, GraphSource } from "../execution/graph_runner.ts";
import type { ExecutorStats } from "../execution/executor.ts";
import { createSession } from "../execution/ort_session_factory.ts";
import { runSession } from "../execution/ort_tensors.ts";
import type { SimulatedDevices } from "../execution/simulated_devices.ts";
import type { SimulatedTiming } from "../execution/simulated_executor.ts";
import { LAYER_IO } from "./compose_layer.ts";

/** Stand-in factor of every routed expert. */
export const ROUTED_STAND_IN = 0.01;
/** Stand-in factor of every shared expert. */
export const SHARED_STAND_IN = 0.005;

/** Options of {@linkcode SimulatedLayerRunner}. */
export interface SimulatedLayerRunnerOptions {
  manifest: ModelManifest;
  /** The backend's devices (shared with its simulated per-expert executor). */
  devices: SimulatedDevices;
  /** Device time per execution and load time per layer executable. */
  timing: SimulatedTiming;
}

/** A graph loaded under a key. */
type Graph =
  | { kind: "gate"; layer: number | null; session: ort.InferenceSession }
  | { kind: "layer"; layer: number | null };

/** Layer of a session key (`layer/L2/gate`, `layer/L2#7`, `L2/gate`); null when none. */
function layerOfKey(key: string): number | null {
  const match = /(?:^|\/)L(\d+)(?:[/#]|$)/.exec(key);
  return match ? Number(match[1]) : null;
}

/** Layer executables simulated on the backend's devices, gates run by onnxruntime. */
export class SimulatedLayerRunner implements GraphRunner {
  readonly provider = "simulated";
  readonly fallbacks = [] as const;
  readonly sharedThread = false;
  readonly needsGraphBytes = false;
  readonly slots: number;
  readonly depth: number;
  readonly #manifest: ModelManifest;
  readonly #devices: SimulatedDevices;
  readonly #timing: SimulatedTiming;
  /** A gate row in expert rows: `E / (2·d_ff)`. */
  readonly #gateUnit: number;
  readonly #graphs = new Map<string, Graph>();
  /** Gate sessions by layer (the fused next gate's). */
  readonly #gates = new Map<number, ort.InferenceSession>();
  /** Sessions still used by a queued or running execution, and those replaced meanwhile. */
  readonly #uses = new Map<ort.InferenceSession, number>();
  readonly #retired = new Set<ort.InferenceSession>();
  #closed = false;

  constructor(options: SimulatedLayerRunnerOptions) {
    for (
      const field of ["fixedMs", "perRowMs", "perExpertMs", "loadFixedMs", "loadMsPerMb"] as const
    ) {
      const value = options.timing[field] ?? 0;
      if (!Number.isFinite(value) || value < 0) {
        throw new RangeError(`Cannot simulate layers: ${field} must be >= 0, got ${value}`);
      }
    }
    this.#manifest = options.manifest;
    this.#devices = options.devices;
    this.#timing = options.timing;
    this.slots = options.devices.slots;
    this.depth = options.devices.slots;
    this.#gateUnit = options.manifest.experts / (2 * options.manifest.d_ff);
  }

  /** Device milliseconds of `workRows` expert rows over `touched` routed experts. */
  durationMs(workRows: number, touched = 0): number {
    return this.#timing.fixedMs + (this.#timing.perExpertMs ?? 0) * touched +
      this.#timing.perRowMs * workRows;
  }

  async load(key: string, source: GraphSource): Promise<void> {
    if (this.#closed) throw new Error("Cannot load: runner is closed");
    const layer = layerOfKey(key);
    let graph: Graph;
    if ("path" in source) {
      const session = await createSession(await Deno.readFile(source.path), "cpu");
      graph = { kind: "gate", layer, session };
    } else {
      const mib = ("size" in source ? source.size : source.bytes.byteLength) / 2 ** 20;
      await this.#devices.delay(
        (this.#timing.loadFixedMs ?? 0) + (this.#timing.loadMsPerMb ?? 0) * mib,
      );
      graph = { kind: "layer", layer };
    }
    if (this.#closed) {
      if (graph.kind === "gate") await graph.session.release();
      throw new Error("Cannot load: runner is closed");
    }
    const previous = this.#graphs.get(key);
    this.#graphs.set(key, graph);
    if (graph.kind === "gate" && layer !== null && /\/gate$/.test(key)) {
      this.#gates.set(layer, graph.session);
    }
    if (previous) await this.#forget(previous);
  }

  async unload(key: string): Promise<void> {
    const graph = this.#graphs.get(key);
    this.#graphs.delete(key);
    if (graph) await this.#forget(graph);
  }

  has(key: string): boolean {
    return this.#graphs.has(key);
  }

  run(key: string, feeds: Feeds, outputs: readonly string[], rows: number): Promise<GraphRun> {
    if (this.#closed) return Promise.reject(new Error("Cannot run: runner is closed"));
    const graph = this.#graphs.get(key);
    if (!graph) return Promise.reject(new Error(`Cannot run "${key}": not loaded`));
    return graph.kind === "gate"
      ? this.#runGate(key, graph.session, feeds, outputs, rows)
      : this.#runLayer(key, graph.layer, feeds, outputs, rows);
  }

  stats(): ExecutorStats {
    return this.#devices.stats();
  }

  /** Releases the gate sessions (the devices belong to the executor). */
  async close(): Promise<void> {
    this.#closed = true;
    const sessions = new Set([...this.#gates.values(), ...this.#retired]);
    for (const graph of this.#graphs.values()) {
      if (graph.kind === "gate") sessions.add(graph.session);
    }
    this.#graphs.clear();
    this.#gates.clear();
    this.#retired.clear();
    for (const session of sessions) await session.release();
  }

  /** A graph given as a file: onnxruntime computes it, the device is charged a gate's rows. */
  async #runGate(
    key: string,
    session: ort.InferenceSession,
    feeds: Feeds,
    outputs: readonly string[],
    rows: number,
  ): Promise<GraphRun> {
    const input = feeds[ONNX_INPUT_NAME];
    if (!input) throw new RangeError(`Cannot run "${key}": input "${ONNX_INPUT_NAME}" is missing`);
    const ms = this.durationMs((input.dims[0] ?? 0) * this.#gateUnit);
    return await this.#withSession(session, async () => {
      const run = await this.#devices.submit(ms, rows, () => runSession(session, feeds, outputs));
      return { outputs: run.value, ms: run.ms };
    });
  }

  /** A composed layer executable: device time for its work rows, stand-in outputs. */
  async #runLayer(
    key: string,
    layer: number | null,
    feeds: Feeds,
    outputs: readonly string[],
    rows: number,
  ): Promise<GraphRun> {
    const batch = layerFeeds(key, feeds, this.#manifest.d_model);
    const wantsLogits = outputs.includes(LAYER_IO.logits);
    let gate: ort.InferenceSession | undefined;
    if (wantsLogits) {
      gate = layer === null ? undefined : this.#gates.get(layer + 1);
      if (!gate) {
        throw new Error(`Cannot run "${key}": the next layer's gate is not loaded`);
      }
    }
    for (const name of outputs) {
      if (!(Object.values(LAYER_IO) as string[]).includes(name)) {
        throw new RangeError(`Cannot run "${key}": it has no output "${name}"`);
      }
    }
    const shared = this.#manifest.shared_experts;
    const workRows = batch.assignments + batch.entry * shared +
      (wantsLogits ? batch.entry * this.#gateUnit : 0);
    const duration = this.durationMs(workRows, batch.touched);
    const compute = async () => {
      const { routed, hidden } = standInLayer(batch, this.#manifest.d_model, shared);
      const out: Record<string, Float32Array> = {};
      if (outputs.includes(LAYER_IO.routed)) out[LAYER_IO.routed] = routed;
      if (outputs.includes(LAYER_IO.hidden)) out[LAYER_IO.hidden] = hidden;
      if (gate && batch.entry === 0) out[LAYER_IO.logits] = new Float32Array(0);
      else if (gate) {
        const logits = await runSession(gate, {
          [ONNX_INPUT_NAME]: {
            type: "float32",
            data: hidden.slice(),
            dims: [batch.entry, this.#manifest.d_model],
          },
        }, [ONNX_OUTPUT_NAME]);
        out[LAYER_IO.logits] = logits[ONNX_OUTPUT_NAME]!;
      }
      return out;
    };
    const run = gate
      ? await this.#withSession(
        gate,
        () => this.#devices.submit(duration, rows, compute),
      )
      : await this.#devices.submit(duration, rows, compute);
    return { outputs: run.value, ms: run.ms };
  }

  /** Keeps `session` alive while `body` runs, even when its key is reloaded meanwhile. */
  async #withSession<T>(session: ort.InferenceSession, body: () => Promise<T>): Promise<T> {
    this.#uses.set(session, (this.#uses.get(session) ?? 0) + 1);
    try {
      return await body();
    } finally {
      const left = this.#uses.get(session)! - 1;
      if (left > 0) this.#uses.set(session, left);
      else {
        this.#uses.delete(session);
        if (this.#retired.delete(session)) await session.release();
      }
    }
  }

  async #forget(graph: Graph): Promise<void> {
    if (graph.kind !== "gate") return;
    if (graph.layer !== null && this.#gates.get(graph.layer) === graph.session) {
      this.#gates.delete(graph.layer);
    }
    if ((this.#uses.get(graph.session) ?? 0) > 0) this.#retired.add(graph.session);
    else await graph.session.release();
  }
}

/** The inputs of one layer execution, checked. */
interface LayerBatchFeeds {
  rows: Float32Array;
  /** All rows `R` and entry rows `M`. */
  total: number;
  entry: number;
  residual: Float32Array;
  src: Int32Array;
  weight: Float32Array;
  assignments: number;
  /** Hosted experts with at least one assignment. */
  touched: number;
}

/** Reads and checks the composed graph's inputs (`compose_layer.ts`); a `RangeError` says what. */
function layerFeeds(key: string, feeds: Feeds, width: number): LayerBatchFeeds {
  const fail = (what: string) => new RangeError(`Cannot run "${key}": ${what}`);
  const get = <T extends Feed["type"]>(name: string, type: T): Extract<Feed, { type: T }> => {
    const feed = feeds[name];
    if (!feed || feed.type !== type) throw fail(`input "${name}" (${type}) is missing`);
    return feed as Extract<Feed, { type: T }>;
  };
  const rows = get(LAYER_IO.rows, "float32");
  const residual = get(LAYER_IO.residual, "float32");
  const src = get(LAYER_IO.src, "int32").data;
  const counts = get(LAYER_IO.counts, "int32").data;
  const weight = get(LAYER_IO.weight, "float32").data;
  const total = rows.dims[0] ?? 0;
  const entry = residual.dims[0] ?? 0;
  if (
    rows.data.length !== total * width || residual.data.length !== entry * width ||
    entry > total
  ) {
    throw fail(`rows [${rows.dims}] and residual [${residual.dims}] do not fit d_model ${width}`);
  }
  const assignments = src.length;
  if (weight.length !== assignments || counts.reduce((a, b) => a + b, 0) !== assignments) {
    throw fail(`${assignments} assignments, ${weight.length} weights, counts summing otherwise`);
  }
  for (const row of src) {
    if (row < 0 || row >= total) throw fail(`assignment row ${row} outside [0, ${total})`);
  }
  const touched = counts.reduce((n, count) => n + (count > 0 ? 1 : 0), 0);
  return {
    rows: rows.data,
    total,
    entry,
    residual: residual.data,
    src,
    weight,
    assignments,
    touched,
  };
}

/** The stand-in outputs (see the module comment), pure. */
export function standInLayer(
  batch: Pick<LayerBatchFeeds, "rows" | "total" | "entry" | "residual" | "src" | "weight">,
  width: number,
  sharedExperts: number,
): { routed: Float32Array; hidden: Float32Array } {
  const { rows, total, entry, residual, src, weight } = batch;
  const scale = new Float32Array(total);
  for (let i = 0; i < src.length; i++) scale[src[i]!]! += weight[i]!;
  const routed = new Float32Array(total * width);
  for (let r = 0; r < total; r++) {
    const factor = ROUTED_STAND_IN * scale[r]!;
    if (factor === 0) continue;
    for (let c = r * width; c < (r + 1) * width; c++) routed[c] = factor * rows[c]!;
  }
  const hidden = new Float32Array(entry * width);
  const shared = SHARED_STAND_IN * sharedExperts;
  for (let i = 0; i < hidden.length; i++) {
    hidden[i] = residual[i]! + routed[i]! + shared * rows[i]!;
  }
  return { routed, hidden };
}
