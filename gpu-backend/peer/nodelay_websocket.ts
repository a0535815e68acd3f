/**
 * @module A WebSocket client over a TCP socket with `TCP_NODELAY` set, for the expert
 * channel.
 *
 * Why not the global `WebSocket`: Deno's client leaves Nagle's algorithm on and writes a
 * frame's header and its payload separately. The payload then waits for the ACK of the
 * header, which the peer delays by ~40 ms (Linux delayed ACK): measured here, a 1.1 KB
 * frame round-trips in 44 ms and a 100 B one in 0.05 ms (`deno task bench:hop`, peer
 * section). Every layer that crossed backends paid that stall. This client sets
 * `TCP_NODELAY`, writes each wave of frames in one `write`, and speaks RFC 6455 as a
 * client: handshake with a checked `Sec-WebSocket-Accept`, masked frames, ping → pong,
 * close handshake, fragmented messages reassembled. The server side stays
 * `Deno.upgradeWebSocket` (its writes do not stall).
 *
 * It offers the part of the `WebSocket` interface the peer client uses (`onopen`,
 * `onmessage` with an `ArrayBuffer`, `onclose`, `onerror`, `send`, `close`), so the
 * two are interchangeable. Plain `ws://` only: backends serve HTTP on the pool network.
 */

import { concatBytes } from "../../shared/concat_bytes.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The subset of `WebSocket` the expert channel uses. */
export interface PeerSocket {
  onopen: (() => void) | null;
  onmessage: ((event: { data: ArrayBuffer }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: (() => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}

/** Options of {@linkcode NoDelayWebSocket}. */
export interface NoDelayWebSocketOptions {
  /** Largest message accepted (bytes); a larger one closes the socket (1009). Default 1 GiB. */
  maxMessageBytes?: number;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/** A client WebSocket on a `TCP_NODELAY` socket (see the module comment). */
export class NoDelayWebSocket implements PeerSocket {
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  #state = CONNECTING;
  #conn: Deno.TcpConn | null = null;
  #outbox: Uint8Array[] = [];
  #writing = false;
  readonly #maxMessageBytes: number;

  constructor(url: string, options: NoDelayWebSocketOptions = {}) {
    const target = new URL(url);
    if (target.protocol !== "ws:") {
      throw new TypeError(`Cannot open a peer channel: "${url}" is not a ws:// URL`);
    }
    this.#maxMessageBytes = options.maxMessageBytes ?? 2 ** 30;
    void this.#run(target);
  }

  /** Queues one binary message; messages sent in one go leave in one write. */
  send(data: Uint8Array): void {
    if (this.#state !== OPEN) return;
    this.#outbox.push(encodeClientFrame(0x2, data));
    if (!this.#writing) void this.#drain();
  }

  /** Starts the close handshake (or abandons the connection attempt). */
  close(code = 1000, reason = ""): void {
    if (this.#state === CLOSED) return;
    if (this.#state === OPEN && this.#conn) {
      const body = new Uint8Array(2 + encoder.encode(reason).byteLength);
      new DataView(body.buffer).setUint16(0, code);
      body.set(encoder.encode(reason), 2);
      this.#outbox.push(encodeClientFrame(0x8, body));
      if (!this.#writing) void this.#drain().finally(() => this.#finish(code, reason));
      else queueMicrotask(() => this.#finish(code, reason));
      return;
    }
    this.#finish(code, reason);
  }

  async #run(target: URL): Promise<void> {
    let conn: Deno.TcpConn;
    try {
      conn = await Deno.connect({ hostname: target.hostname, port: Number(target.port || 80) });
    } catch (error) {
      return this.#finish(1006, (error as Error).message);
    }
    if (this.#state === CLOSED) {
      conn.close();
      return;
    }
    conn.setNoDelay(true);
    this.#conn = conn;
    const reader = new ByteReader(conn);
    try {
      await this.#handshake(conn, reader, target);
      this.#state = OPEN;
      this.onopen?.();
      await this.#readMessages(reader);
    } catch (error) {
      this.#finish(1006, (error as Error).message);
    }
  }

  async #handshake(conn: Deno.TcpConn, reader: ByteReader, target: URL): Promise<void> {
    const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
    await writeAll(
      conn,
      encoder.encode(
        `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
          `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\n` +
          `Sec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    const head = await reader.until(encoder.encode("\r\n\r\n"), 16 * 1024);
    const [status, ...lines] = decoder.decode(head).split("\r\n");
    if (!/^HTTP\/1\.1 101\b/.test(status ?? "")) {
      throw new Error(`handshake refused: ${status}`);
    }
    const accept = lines.find((line) => /^sec-websocket-accept:/i.test(line))?.split(":")[1]
      ?.trim();
    const digest = await crypto.subtle.digest("SHA-1", encoder.encode(key + GUID));
    if (accept !== btoa(String.fromCharCode(...new Uint8Array(digest)))) {
      throw new Error("handshake refused: wrong Sec-WebSocket-Accept");
    }
  }

  async #readMessages(reader: ByteReader): Promise<void> {
    let fragments: Uint8Array[] = [];
    let fragmentBytes = 0;
    for (;;) {
      const frame = await readFrame(reader, this.#maxMessageBytes);
      if (frame === null) return this.#finish(1006, "connection closed");
      const { opcode, fin, payload } = frame;
      if (opcode === 0x8) {
        const code = payload.byteLength >= 2 ? new DataView(payload.buffer).getUint16(0) : 1005;
        const reason = decoder.decode(payload.subarray(2));
        if (this.#state === OPEN) this.close(code === 1005 ? 1000 : code, "");
        return this.#finish(code, reason);
      }
      if (opcode === 0x9) {
        this.#outbox.push(encodeClientFrame(0xa, payload));
        if (!this.#writing) void this.#drain();
        continue;
      }
      if (opcode === 0xa) continue;
      fragments.push(payload);
      fragmentBytes += payload.byteLength;
      if (fragmentBytes > this.#maxMessageBytes) {
        this.close(1009, "message too big");
        return;
      }
      if (!fin) continue;
      const message = fragments.length === 1 ? payload : concatBytes(fragments, fragmentBytes);
      fragments = [];
      fragmentBytes = 0;
      if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        this.onmessage?.({ data: message.buffer as ArrayBuffer });
      }
    }
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#outbox.length > 0 && this.#conn) {
        const chunks = this.#outbox;
        this.#outbox = [];
        const bytes = chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
        await writeAll(this.#conn, bytes);
      }
    } catch (error) {
      this.#finish(1006, (error as Error).message);
    } finally {
      this.#writing = false;
    }
  }

  #finish(code: number, reason: string): void {
    if (this.#state === CLOSED) return;
    this.#state = CLOSED;
    this.#outbox = [];
    try {
      this.#conn?.close();
    } catch {
      // Already closed by the peer.
    }
    this.#conn = null;
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
}

/** One client frame: FIN, `opcode`, the masked payload (RFC 6455 §5.2–5.3). */
export function encodeClientFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const length = payload.byteLength;
  const lengthBytes = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const headerBytes = 2 + lengthBytes + 4;
  const frame = new Uint8Array(headerBytes + length);
  const view = new DataView(frame.buffer);
  frame[0] = 0x80 | opcode;
  if (lengthBytes === 0) frame[1] = 0x80 | length;
  else if (lengthBytes === 2) {
    frame[1] = 0x80 | 126;
    view.setUint16(2, length);
  } else {
    frame[1] = 0x80 | 127;
    view.setBigUint64(2, BigInt(length));
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  frame.set(mask, headerBytes - 4);
  frame.set(payload, headerBytes);
  maskInPlace(frame, headerBytes, mask);
  return frame;
}

/** XORs `bytes[from..]` with the 4-byte `mask`, four bytes at a time where aligned. */
function maskInPlace(bytes: Uint8Array, from: number, mask: Uint8Array): void {
  let i = from;
  // Bring `i` to a 4-byte boundary of the buffer so a Uint32Array view can do the rest.
  for (; i < bytes.length && (bytes.byteOffset + i) % 4 !== 0; i++) {
    bytes[i]! ^= mask[(i - from) % 4]!;
  }
  const words = Math.floor((bytes.length - i) / 4);
  if (words > 0) {
    const shift = (i - from) % 4;
    const rotated = new Uint8Array(4);
    for (let k = 0; k < 4; k++) rotated[k] = mask[(shift + k) % 4]!;
    const key = new Uint32Array(rotated.buffer)[0]!;
    const view = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words);
    for (let w = 0; w < words; w++) view[w]! ^= key;
    i += words * 4;
  }
  for (; i < bytes.length; i++) bytes[i]! ^= mask[(i - from) % 4]!;
}

/** Reads one frame; null at the end of the stream. Server frames may be masked (tolerated). */
async function readFrame(
  reader: ByteReader,
  maxBytes: number,
): Promise<{ opcode: number; fin: boolean; payload: Uint8Array } | null> {
  const head = await reader.exact(2);
  if (head === null) return null;
  const fin = (head[0]! & 0x80) !== 0;
  const opcode = head[0]! & 0x0f;
  const masked = (head[1]! & 0x80) !== 0;
  let length = head[1]! & 0x7f;
  if (length === 126) {
    const ext = await reader.exact(2);
    if (ext === null) return null;
    length = new DataView(ext.buffer, ext.byteOffset, 2).getUint16(0);
  } else if (length === 127) {
    const ext = await reader.exact(8);
    if (ext === null) return null;
    const big = new DataView(ext.buffer, ext.byteOffset, 8).getBigUint64(0);
    if (big > BigInt(maxBytes)) throw new Error(`frame of ${big} bytes exceeds ${maxBytes}`);
    length = Number(big);
  }
  if (length > maxBytes) throw new Error(`frame of ${length} bytes exceeds ${maxBytes}`);
  const mask = masked ? await reader.exact(4) : null;
  const payload = length === 0 ? new Uint8Array(0) : await reader.exact(length);
  if (payload === null || (masked && mask === null)) return null;
  if (mask) maskInPlace(payload, 0, mask);
  return { opcode, fin, payload };
}

/** Buffered reads from a connection: exact byte counts, or up to a delimiter. */
class ByteReader {
  readonly #conn: Deno.Conn;
  #buffer = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Exactly `n` bytes in a fresh buffer of their own; null if the stream ends first. */
  async exact(n: number): Promise<Uint8Array | null> {
    const out = new Uint8Array(n);
    let filled = Math.min(n, this.#end - this.#start);
    out.set(this.#buffer.subarray(this.#start, this.#start + filled));
    this.#start += filled;
    while (filled < n) {
      if (n - filled >= this.#buffer.length) {
        // Large payloads go straight into their own buffer.
        const read = await this.#conn.read(out.subarray(filled));
        if (read === null) return null;
        filled += read;
        continue;
      }
      if (!(await this.#fill())) return null;
      const take = Math.min(n - filled, this.#end - this.#start);
      out.set(this.#buffer.subarray(this.#start, this.#start + take), filled);
      this.#start += take;
      filled += take;
    }
    return out;
  }

  /** Bytes up to and including `delimiter`, at most `limit` of them. */
  async until(delimiter: Uint8Array, limit: number): Promise<Uint8Array> {
    for (;;) {
      const at = indexOf(this.#buffer.subarray(this.#start, this.#end), delimiter);
      if (at >= 0) {
        const out = this.#buffer.slice(this.#start, this.#start + at + delimiter.length);
        this.#start += at + delimiter.length;
        return out;
      }
      if (this.#end - this.#start >= limit) throw new Error(`no delimiter within ${limit} bytes`);
      if (!(await this.#fill())) throw new Error("connection closed during the handshake");
    }
  }

  async #fill(): Promise<boolean> {
    if (this.#start === this.#end) this.#start = this.#end = 0;
    else if (this.#end === this.#buffer.length) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    const read = await this.#conn.read(this.#buffer.subarray(this.#end));
    if (read === null) return false;
    this.#end += read;
    return true;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
}
