/**
 * @module The layer executables of one backend: per layer, one composed session that
 * runs every routed expert hosted here, the shared experts and the next layer's gate
 * (`compose_layer.ts`), plus the first layer's gate on its own.
 *
 * Lifecycle. `start(hosted)` builds one executable per layer. `stage(version, hosted)`
 * builds the executables of a staged placement plan while the current ones keep
 * serving (a layer whose hosted set does not change keeps its executable);
 * `activate(version)` makes them current in one assignment per backend. Work holds the
 * executable it was partitioned against (`acquire`/`release`), so a batch always runs
 * on the executable its rows were routed for; a replaced executable is unloaded once
 * its last work finished.
 */
import { join } from "node:path";
import type { Logger } from "../../shared/logger.ts";
import { type ModelManifest, type ModelPart, modelPartPath } from "../../shared/model_manifest.ts";
import type { GraphRunner } from "../execution/graph_runner.ts";
import { composeLayerGraph } from "./compose_layer.ts";

/** One composed layer session. */
export interface LayerExecutable {
  readonly layer: number;
  /** Session key on the runner. */
  readonly key: string;
  /** Hosted routed experts in hosting order (the order of the graph's `counts`). */
  readonly experts: readonly number[];
  /** `[experts of the layer]`: index into `experts`, or -1 when not hosted. */
  readonly position: Int32Array;
  /** Whether it outputs the next layer's gate logits. */
  readonly fusedGate: boolean;
  /** Milliseconds composing and loading it took. */
  readonly buildMs: number;
}

/** Options of {@linkcode LayerExecutables}. */
export interface LayerExecutablesOptions {
  runner: GraphRunner;
  manifest: ModelManifest;
  modelDir: string;
  logger: Logger;
  /** Fuse the next layer's gate into each layer executable (default true). */
  fuseGate?: boolean;
}

interface Entry {
  executable: LayerExecutable;
  /** Works holding it. */
  uses: number;
  /** Replaced: unload once unused. */
  retired: boolean;
}

/** Builds, swaps and drains the layer executables. */
export class LayerExecutables {
  readonly #options: LayerExecutablesOptions;
  readonly fuseGate: boolean;
  #current: Entry[] = [];
  #staged: { version: number; entries: Entry[] } | null = null;
  readonly #entries = new Map<string, Entry>();
  #builds = 0;
  /** Builds run one after another (a stage waits for a stage under way). */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(options: LayerExecutablesOptions) {
    this.#options = options;
    this.fuseGate = options.fuseGate ?? true;
  }

  /**
   * Session key of a layer's stand-alone gate. Every layer has one: layer 0's runs for
   * every request; a later layer's runs when the fused gate cannot be used — without
   * fusion, and after a layer whose peers' rows were added after its execution (overlap).
   */
  gateKey(layer: number): string {
    return `layer/L${layer}/gate`;
  }

  /** Loads the gates and builds every layer's executable for `hosted[layer]`. */
  async start(hosted: readonly (readonly number[])[]): Promise<void> {
    const { manifest, runner } = this.#options;
    for (let layer = 0; layer < manifest.layers; layer++) {
      await runner.load(this.gateKey(layer), { path: this.#path({ kind: "gate", layer }) });
    }
    const entries: Entry[] = [];
    for (let layer = 0; layer < manifest.layers; layer++) {
      entries.push(this.#track(await this.#build(layer, hosted[layer] ?? [])));
    }
    this.#current = entries;
  }

  /** The executable new work of `layer` runs on. */
  current(layer: number): LayerExecutable {
    const entry = this.#current[layer];
    if (!entry) throw new RangeError(`Cannot find the executable of layer ${layer}`);
    return entry.executable;
  }

  /** The staged plan version whose executables are built, or null. */
  get stagedVersion(): number | null {
    return this.#staged?.version ?? null;
  }

  /**
   * Builds the executables for `hosted[layer]` under plan `version` (layers whose set
   * is unchanged reuse the current one); returns the milliseconds it took.
   */
  stage(version: number, hosted: readonly (readonly number[])[]): Promise<number> {
    const run = this.#chain.then(async () => {
      const started = performance.now();
      const previous = this.#staged;
      const entries: Entry[] = [];
      for (let layer = 0; layer < this.#options.manifest.layers; layer++) {
        const wanted = hosted[layer] ?? [];
        const reuse = [this.#current[layer], previous?.entries[layer]].find((entry) =>
          entry !== undefined && sameSet(entry.executable.experts, wanted)
        );
        entries.push(reuse ?? this.#track(await this.#build(layer, wanted)));
      }
      this.#staged = { version, entries };
      // A superseded staging that never went live is dropped.
      if (previous) this.#retireUnused(previous.entries);
      return performance.now() - started;
    });
    this.#chain = run.catch(() => {});
    return run;
  }

  /** Makes the staged executables of `version` current; false when it is not staged. */
  activate(version: number): boolean {
    const staged = this.#staged;
    if (!staged || staged.version !== version) return false;
    const previous = this.#current;
    this.#current = staged.entries;
    this.#staged = null;
    this.#retireUnused(previous);
    return true;
  }

  /** Whether `expert` of `layer` is in the current or the staged executable. */
  holds(layer: number, expert: number): boolean {
    const inEntry = (entry: Entry | undefined) =>
      entry !== undefined && entry.executable.position[expert]! >= 0;
    return inEntry(this.#current[layer]) || inEntry(this.#staged?.entries[layer]);
  }

  /** Marks `executable` used by one more work (it stays loaded until released). */
  acquire(executable: LayerExecutable): void {
    this.#entries.get(executable.key)!.uses++;
  }

  /** One work on `executable` finished. */
  release(executable: LayerExecutable): void {
    const entry = this.#entries.get(executable.key);
    if (!entry) return;
    entry.uses--;
    if (entry.retired && entry.uses === 0) void this.#unload(entry);
  }

  /** Per layer: the current executable's hosted experts, build time and key. */
  describe(): { layer: number; key: string; experts: number; build_ms: number }[] {
    return this.#current.map(({ executable }) => ({
      layer: executable.layer,
      key: executable.key,
      experts: executable.experts.length,
      build_ms: Math.round(executable.buildMs),
    }));
  }

  #path(part: ModelPart): string {
    return join(this.#options.modelDir, modelPartPath(this.#options.manifest, part));
  }

  async #build(layer: number, hosted: readonly number[]): Promise<LayerExecutable> {
    const { manifest, runner } = this.#options;
    const started = performance.now();
    const experts = [...hosted].sort((a, b) => a - b);
    const fused = this.fuseGate && layer + 1 < manifest.layers;
    // A runner that does not execute composed graphs (the simulated one) takes their size.
    const source = runner.needsGraphBytes === false
      ? { size: await this.#graphSize(layer, experts, fused) }
      : { bytes: await this.#compose(layer, experts, fused) };
    const key = `layer/L${layer}#${++this.#builds}`;
    await runner.load(key, source);
    const position = new Int32Array(manifest.experts).fill(-1);
    experts.forEach((expert, i) => position[expert] = i);
    const buildMs = performance.now() - started;
    this.#options.logger.debug("layer executable built", {
      layer,
      key,
      experts: experts.length,
      bytes: "size" in source ? source.size : source.bytes.byteLength,
      ms: Math.round(buildMs),
    });
    return { layer, key, experts, position, fusedGate: fused, buildMs };
  }

  /** The composed graph of `experts` (sorted), the shared experts and, fused, the next gate. */
  async #compose(layer: number, experts: readonly number[], fused: boolean): Promise<Uint8Array> {
    const { manifest } = this.#options;
    const read = (part: ModelPart) => Deno.readFile(this.#path(part));
    return composeLayerGraph({
      dModel: manifest.d_model,
      experts: await Promise.all(
        experts.map(async (id) => ({
          id,
          bytes: await read({ kind: "expert", layer, expert: id }),
        })),
      ),
      shared: await Promise.all(
        Array.from(
          { length: manifest.shared_experts },
          (_, expert) => read({ kind: "shared", layer, expert }),
        ),
      ),
      ...(fused
        ? {
          nextGate: {
            bytes: await read({ kind: "gate", layer: layer + 1 }),
            experts: manifest.experts,
          },
        }
        : {}),
    });
  }

  /** What the composed graph would weigh: the bytes of the files it inlines. */
  async #graphSize(layer: number, experts: readonly number[], fused: boolean): Promise<number> {
    const parts: ModelPart[] = [
      ...experts.map((expert): ModelPart => ({ kind: "expert", layer, expert })),
      ...Array.from(
        { length: this.#options.manifest.shared_experts },
        (_, expert): ModelPart => ({ kind: "shared", layer, expert }),
      ),
      ...(fused ? [{ kind: "gate", layer: layer + 1 } as const] : []),
    ];
    const sizes = await Promise.all(
      parts.map(async (part) => (await Deno.stat(this.#path(part))).size),
    );
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  #track(executable: LayerExecutable): Entry {
    const entry: Entry = { executable, uses: 0, retired: false };
    this.#entries.set(executable.key, entry);
    return entry;
  }

  /** Retires entries that neither the current nor the staged set still uses. */
  #retireUnused(entries: readonly Entry[]): void {
    const live = new Set([...this.#current, ...(this.#staged?.entries ?? [])]);
    for (const entry of entries) {
      if (live.has(entry) || entry.retired) continue;
      entry.retired = true;
      if (entry.uses === 0) void this.#unload(entry);
    }
  }

  async #unload(entry: Entry): Promise<void> {
    this.#entries.delete(entry.executable.key);
    try {
      await this.#options.runner.unload(entry.executable.key);
    } catch (error) {
      this.#options.logger.warn("layer executable unload failed", {
        key: entry.executable.key,
        error: (error as Error).message,
      });
    }
  }
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((x) => set.has(x));
}
