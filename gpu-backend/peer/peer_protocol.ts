/**
 * @module Frames of the backend-to-backend expert channel (a WebSocket per peer pair).
 *
 * One binary frame = `u32 header length (little-endian) | JSON header | FP32 payload`.
 * A `run` frame carries rows for many (layer, expert) items — of many requests — at
 * once; the `result` frame answers all its items in the same order. The first frame
 * a client sends is `hello` with the internal token; the server answers `welcome` or
 * closes the socket.
 */

/** One item of a run frame: `rows` rows for logical expert `expert` of `layer`. */
export interface PeerItem {
  layer: number;
  expert: number;
  rows: number;
}

/** Frame headers. */
export type PeerHeader =
  | { t: "hello"; from: string; token: string | null }
  | { t: "welcome"; backend: string }
  | { t: "run"; id: number; items: PeerItem[] }
  | { t: "result"; id: number; ok: true; rows: number[] }
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
