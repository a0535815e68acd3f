/**
 * @module Frames of the backend-to-backend expert channel (a WebSocket per peer pair).
 *
 * One binary frame = `u32 header length (little-endian) | JSON header | payload` of
 * 4-byte values. A `run` frame (per-expert path) carries rows for many (layer, expert)
 * items — of many requests — at once. A `layer` frame (layer path) carries per item one
 * request's rows for one layer, each row once, with its assignments (row, expert,
 * combine weight); the peer answers each row's `Σ weight · expert(row)` over its
 * assignments, so a token choosing two experts of that peer travels once. The `result`
 * frame answers all items of either kind in order. The first frame a client sends is
 * `hello` with the internal token; the server answers `welcome` or closes the socket.
 */

/** One item of a run frame: `rows` rows for logical expert `expert` of `layer`. */
export interface PeerItem {
  layer: number;
  expert: number;
  rows: number;
}

/**
 * One item of a layer frame: `rows` unique rows of `layer` and `assigned` assignments.
 * Payload: `rows · d` FP32 values, then `assigned` INT32 rows, `assigned` INT32 experts,
 * `assigned` FP32 weights.
 */
export interface PeerLayerItem {
  layer: number;
  rows: number;
  assigned: number;
}

/** A layer item's data (the payload part of one {@linkcode PeerLayerItem}). */
export interface PeerLayerData {
  layer: number;
  rows: number;
  /** `[rows, d]` */
  values: Float32Array;
  assignRow: Int32Array;
  assignExpert: Int32Array;
  assignWeight: Float32Array;
}

/** Frame headers. */
export type PeerHeader =
  | { t: "hello"; from: string; token: string | null }
  | { t: "welcome"; backend: string }
  | { t: "run"; id: number; items: PeerItem[] }
  | { t: "layer"; id: number; items: PeerLayerItem[] }
  | {
    t: "result";
    id: number;
    ok: true;
    rows: number[];
    /** Ms the peer spent from receiving the frame to answering it (queue + execution). */
    serveMs?: number;
  }
  | { t: "result"; id: number; ok: false; error: string; code: string };

/** A decoded frame. */
export interface PeerFrame {
  header: PeerHeader;
  payload: Float32Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes a frame; the payload is copied after the header. */
export function encodePeerFrame(
  header: PeerHeader,
  payload?: Float32Array,
): Uint8Array<ArrayBuffer> {
  const json = encoder.encode(JSON.stringify(header));
  // Pad the header so the payload starts 4-byte aligned and can be viewed in place.
  const padded = Math.ceil((4 + json.byteLength) / 4) * 4;
  const bytes = new Uint8Array(padded + (payload?.byteLength ?? 0));
  new DataView(bytes.buffer).setUint32(0, json.byteLength, true);
  bytes.set(json, 4);
  bytes.fill(0x20, 4 + json.byteLength, padded);
  if (payload) {
    bytes.set(new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength), padded);
  }
  return bytes;
}

/** Decodes a frame; throws `TypeError` on a malformed one. */
export function decodePeerFrame(data: ArrayBuffer): PeerFrame {
  if (data.byteLength < 4) throw new TypeError("Cannot decode peer frame: shorter than 4 bytes");
  const length = new DataView(data).getUint32(0, true);
  const padded = Math.ceil((4 + length) / 4) * 4;
  if (padded > data.byteLength) {
    throw new TypeError(`Cannot decode peer frame: header length ${length} exceeds the frame`);
  }
  const header = JSON.parse(decoder.decode(new Uint8Array(data, 4, length))) as PeerHeader;
  if ((data.byteLength - padded) % 4 !== 0) {
    throw new TypeError("Cannot decode peer frame: payload is not whole FP32 values");
  }
  return { header, payload: new Float32Array(data, padded) };
}

/** Packs layer items into a frame payload (see {@linkcode PeerLayerItem}). */
export function packLayerItems(items: readonly PeerLayerData[]): Float32Array {
  const length = items.reduce(
    (sum, item) => sum + item.values.length + 3 * item.assignRow.length,
    0,
  );
  const payload = new Float32Array(length);
  const ints = new Int32Array(payload.buffer);
  let at = 0;
  for (const item of items) {
    payload.set(item.values, at);
    at += item.values.length;
    ints.set(item.assignRow, at);
    ints.set(item.assignExpert, at + item.assignRow.length);
    payload.set(item.assignWeight, at + 2 * item.assignRow.length);
    at += 3 * item.assignRow.length;
  }
  return payload;
}

/** Index of the first NaN or ±Infinity in `values`, or -1 (one tight pass, no closures). */
export function firstNonFinite(values: Float32Array): number {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v - v !== 0) return i;
  }
  return -1;
}

/**
 * Views a layer frame's payload as its items (no copy) and checks that every value and
 * weight is finite; throws a `TypeError` when the header and the payload disagree or a
 * value is not finite.
 */
export function unpackLayerItems(
  items: readonly PeerLayerItem[],
  payload: Float32Array,
  width: number,
): PeerLayerData[] {
  const ints = new Int32Array(payload.buffer, payload.byteOffset, payload.length);
  let at = 0;
  const out = items.map((item) => {
    if (
      !Number.isInteger(item.layer) || !Number.isInteger(item.rows) || item.rows < 0 ||
      !Number.isInteger(item.assigned) || item.assigned < 0
    ) {
      throw new TypeError("Cannot decode peer frame: bad layer item");
    }
    const size = item.rows * width;
    const n = item.assigned;
    if (at + size + 3 * n > payload.length) {
      throw new TypeError("Cannot decode peer frame: payload shorter than its items");
    }
    const data: PeerLayerData = {
      layer: item.layer,
      rows: item.rows,
      values: payload.subarray(at, at + size),
      assignRow: ints.subarray(at + size, at + size + n),
      assignExpert: ints.subarray(at + size + n, at + size + 2 * n),
      assignWeight: payload.subarray(at + size + 2 * n, at + size + 3 * n),
    };
    at += size + 3 * n;
    return data;
  });
  if (at !== payload.length) {
    throw new TypeError("Cannot decode peer frame: payload longer than its items");
  }
  // Weights share the payload with the int32 rows and experts, so check them apart.
  for (const item of out) {
    if (firstNonFinite(item.values) >= 0 || firstNonFinite(item.assignWeight) >= 0) {
      throw new TypeError("Cannot decode peer frame: a value is not finite");
    }
  }
  return out;
}
