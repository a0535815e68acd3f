/**
 * @module A small safetensors reader that checks everything before trusting it, and reads
 * one tensor at a time from disk (checkpoints are far larger than memory).
 *
 * Format (huggingface/safetensors): 8 bytes little-endian u64 `N`, then `N` bytes of JSON
 * `{ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__"?: {…} }`, then the
 * data buffer; offsets are relative to the buffer. Checked: the header fits the file and
 * is a JSON object; every dtype is known; every shape is a list of integers ≥ 0; every
 * tensor's byte length is `elements × dtype size`; the tensors cover the buffer exactly,
 * without overlaps or holes, and the buffer ends at the end of the file.
 */

/** Bytes per element of the dtypes safetensors defines. */
export const DTYPE_SIZES: Readonly<Record<string, number>> = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
};

/** Where one tensor lives in its file. */
export interface TensorEntry {
  name: string;
  dtype: string;
  shape: number[];
  /** Absolute byte offsets in the file. */
  start: number;
  end: number;
}

/** An open safetensors file. */
export interface SafetensorsFile {
  path: string;
  tensors: Map<string, TensorEntry>;
  metadata: Record<string, string>;
  /** The raw little-endian bytes of a tensor. */
  read(name: string): Promise<Uint8Array>;
  close(): void;
}

const MAX_HEADER_BYTES = 100 * 1024 * 1024;

/** Opens and validates `path`; throws a `RangeError`/`TypeError` naming what is wrong. */
export async function openSafetensors(path: string): Promise<SafetensorsFile> {
  const file = await Deno.open(path, { read: true });
  try {
    const size = (await file.stat()).size;
    const fail = (why: string): never => {
      throw new RangeError(`Cannot read safetensors file "${path}": ${why}`);
    };
    if (size < 8) fail(`${size} bytes is too short for the 8-byte header length`);
    const headerLength = Number(
      new DataView((await readAt(file, 0, 8)).buffer).getBigUint64(0, true),
    );
    if (headerLength > MAX_HEADER_BYTES) {
      fail(`header length ${headerLength} exceeds ${MAX_HEADER_BYTES}`);
    }
    if (8 + headerLength > size) {
      fail(`header length ${headerLength} runs past the end (${size} bytes)`);
    }
    let header: unknown;
    try {
      header = JSON.parse(
        new TextDecoder("utf-8", { fatal: true }).decode(await readAt(file, 8, headerLength)),
      );
    } catch (error) {
      fail(`header is not UTF-8 JSON (${(error as Error).message})`);
    }
    if (typeof header !== "object" || header === null || Array.isArray(header)) {
      fail("header is not a JSON object");
    }
    const dataStart = 8 + headerLength;
    const { tensors, metadata } = parseHeader(
      header as Record<string, unknown>,
      size - dataStart,
      fail,
    );
    for (const entry of tensors.values()) {
      entry.start += dataStart;
      entry.end += dataStart;
    }
    // Reads share one file position: run them one after another.
    let last: Promise<unknown> = Promise.resolve();
    return {
      path,
      tensors,
      metadata,
      read(name) {
        const entry = tensors.get(name);
        if (entry === undefined) {
          return Promise.reject(new RangeError(`Cannot read tensor "${name}": not in "${path}"`));
        }
        const next = last.catch(() => {}).then(() =>
          readAt(file, entry.start, entry.end - entry.start)
        );
        last = next;
        return next;
      },
      close: () => file.close(),
    };
  } catch (error) {
    file.close();
    throw error;
  }
}

function parseHeader(
  header: Record<string, unknown>,
  dataLength: number,
  fail: (why: string) => never,
): { tensors: Map<string, TensorEntry>; metadata: Record<string, string> } {
  const tensors = new Map<string, TensorEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(header)) {
    if (name === "__metadata__") {
      metadata = (value ?? {}) as Record<string, string>;
      continue;
    }
    const info = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const size = typeof info?.dtype === "string" ? DTYPE_SIZES[info.dtype] : undefined;
    if (size === undefined) {
      fail(`tensor "${name}" has unknown dtype ${JSON.stringify(info?.dtype)}`);
    }
    const shape = info.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      fail(`tensor "${name}" has a bad shape ${JSON.stringify(shape)}`);
    }
    const offsets = info.data_offsets;
    if (
      !Array.isArray(offsets) || offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) || offsets[0] > offsets[1]
    ) {
      fail(`tensor "${name}" has bad data_offsets ${JSON.stringify(offsets)}`);
    }
    const [begin, end] = offsets as [number, number];
    const elements = (shape as number[]).reduce((a, b) => a * b, 1);
    if (end - begin !== elements * size!) {
      fail(
        `tensor "${name}" spans ${end - begin} bytes, ${info.dtype} [${shape}] needs ${
          elements * size!
        }`,
      );
    }
    tensors.set(name, {
      name,
      dtype: info.dtype as string,
      shape: shape as number[],
      start: begin,
      end,
    });
  }
  // Step: the tensors must tile the data buffer exactly.
  let cursor = 0;
  for (const entry of [...tensors.values()].sort((a, b) => a.start - b.start || a.end - b.end)) {
    if (entry.start !== cursor) {
      fail(
        entry.start < cursor
          ? `tensor "${entry.name}" overlaps the previous tensor at byte ${entry.start}`
          : `bytes [${cursor}, ${entry.start}) before tensor "${entry.name}" belong to no tensor`,
      );
    }
    cursor = entry.end;
  }
  if (cursor !== dataLength) {
    fail(`the tensors cover ${cursor} bytes but the data buffer has ${dataLength}`);
  }
  return { tensors, metadata };
}

async function readAt(file: Deno.FsFile, offset: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  await file.seek(offset, Deno.SeekMode.Start);
  let filled = 0;
  while (filled < length) {
    const read = await file.read(bytes.subarray(filled));
    if (read === null) throw new RangeError(`Cannot read ${length} bytes at ${offset}: file ended`);
    filled += read;
  }
  return bytes;
}
