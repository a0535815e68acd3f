/**
 * @module A Hugging Face checkpoint directory: `config.json` plus `*.safetensors`, one file
 * or sharded with `model.safetensors.index.json` (`weight_map`: tensor → shard). Tensors
 * are read one at a time and widened to float32 (`F32`, `F16`, `BF16`; bfloat16 is the top
 * half of a float32, float16 is widened exactly).
 */
import { basename, join } from "node:path";
import { openSafetensors, type SafetensorsFile, type TensorEntry } from "./safetensors.ts";

/** Index file of a sharded checkpoint. */
export const INDEX_FILE = "model.safetensors.index.json";

/** A float32 tensor read from the checkpoint, with its source dtype. */
export interface CheckpointTensor {
  shape: number[];
  data: Float32Array;
  dtype: string;
}

/** An open checkpoint. */
export interface Checkpoint {
  dir: string;
  config: Record<string, unknown>;
  /** Every tensor name, sorted. */
  names(): string[];
  has(name: string): boolean;
  entry(name: string): TensorEntry | undefined;
  /** Reads `name` as float32; `shape` checks its shape (a RangeError names both). */
  read(name: string, shape?: number[]): Promise<CheckpointTensor>;
  close(): void;
}

/** Opens `dir`; throws naming the missing or bad file. */
export async function openCheckpoint(dir: string): Promise<Checkpoint> {
  const config = await readJson(join(dir, "config.json"));
  const shardNames = await shardFiles(dir);
  const files: SafetensorsFile[] = [];
  const owner = new Map<string, SafetensorsFile>();
  try {
    for (const shard of shardNames) {
      const file = await openSafetensors(join(dir, shard));
      files.push(file);
      for (const name of file.tensors.keys()) {
        if (owner.has(name)) {
          throw new RangeError(`Cannot open checkpoint: tensor "${name}" is in two shards`);
        }
        owner.set(name, file);
      }
    }
  } catch (error) {
    files.forEach((file) => file.close());
    throw error;
  }
  return {
    dir,
    config,
    names: () => [...owner.keys()].sort(),
    has: (name) => owner.has(name),
    entry: (name) => owner.get(name)?.tensors.get(name),
    async read(name, shape) {
      const file = owner.get(name);
      if (file === undefined) {
        throw new RangeError(`Cannot import: the checkpoint has no tensor "${name}"`);
      }
      const entry = file.tensors.get(name)!;
      if (shape !== undefined && entry.shape.join(",") !== shape.join(",")) {
        throw new RangeError(
          `Cannot import: tensor "${name}" is [${entry.shape}], expected [${shape}] from config.json`,
        );
      }
      return {
        shape: entry.shape,
        dtype: entry.dtype,
        data: toFloat32(await file.read(name), entry.dtype, name),
      };
    },
    close: () => files.forEach((file) => file.close()),
  };
}

/** The shard files: from the index when there is one, else every `*.safetensors`. */
async function shardFiles(dir: string): Promise<string[]> {
  let index: Record<string, unknown> | undefined;
  try {
    index = await readJson(join(dir, INDEX_FILE));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  if (index !== undefined) {
    const map = index["weight_map"];
    if (typeof map !== "object" || map === null) {
      throw new RangeError(`Cannot open checkpoint: ${INDEX_FILE} has no weight_map object`);
    }
    const shards = [...new Set(Object.values(map as Record<string, unknown>))];
    for (const shard of shards) {
      if (typeof shard !== "string" || basename(shard) !== shard) {
        throw new RangeError(
          `Cannot open checkpoint: ${INDEX_FILE} names a bad shard ${JSON.stringify(shard)}`,
        );
      }
    }
    return (shards as string[]).sort();
  }
  const shards: string[] = [];
  for await (const item of Deno.readDir(dir)) {
    if (item.isFile && item.name.endsWith(".safetensors")) shards.push(item.name);
  }
  if (shards.length === 0) {
    throw new RangeError(`Cannot open checkpoint: no *.safetensors in "${dir}"`);
  }
  return shards.sort();
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(path);
  try {
    const value = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value;
  } catch { /* reported below */ }
  throw new RangeError(`Cannot open checkpoint: "${path}" is not a JSON object`);
}

/** Widens little-endian `bytes` of `dtype` to float32. */
export function toFloat32(bytes: Uint8Array, dtype: string, name: string): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case "F32":
      return Float32Array.from(
        { length: bytes.length / 4 },
        (_, i) => view.getFloat32(i * 4, true),
      );
    case "F16":
      return Float32Array.from(
        { length: bytes.length / 2 },
        (_, i) => view.getFloat16(i * 2, true),
      );
    case "BF16": {
      const out = new Float32Array(bytes.length / 2);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(i * 2, true) << 16;
      return out;
    }
    default:
      throw new TypeError(
        `Cannot import tensor "${name}": dtype ${dtype} is not F32, F16 or BF16`,
      );
  }
}
