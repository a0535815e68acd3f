/**
 * @module The receiving side of the expert channel: accepts a peer's WebSocket at
 * `/v2/peer`, checks its `hello` token, and runs every item of each `run` frame through
 * this backend's local expert path, and the items of each `layer` frame through its
 * layer path — so remote rows join the same queues as local ones — answering with one
 * `result` frame per frame.
 */
import { ApiError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import {
  decodePeerFrame,
  encodePeerFrame,
  firstNonFinite,
  type PeerItem,
  type PeerLayerData,
  unpackLayerItems,
} from "./peer_protocol.ts";

/** Dependencies of {@linkcode acceptPeer}. */
export interface PeerServerDeps {
  backendId: string;
  /** Internal token peers must present; undefined accepts any peer (loopback dev only). */
  token: string | undefined;
  logger: Logger;
  /** Counts frame bytes received and sent (node resources); optional. */
  net?: { received(bytes: number): void; sent(bytes: number): void };
  /** Runs rows of a logical expert hosted here. */
  runLocal(layer: number, expert: number, input: Float32Array, rows: number): Promise<Float32Array>;
  /** Hidden width (`d_model`), to read layer frames. */
  width: number;
  /** Runs layer items (per-row weighted sums, `[rows, d]` each); absent = refused. */
  runLayerItems?(items: PeerLayerData[]): Promise<Float32Array[]>;
  /**
   * Counts frames and rows served and the host-thread ms spent decoding frames and
   * encoding answers (this side's cost of the hop); optional.
   */
  served?: { frames: number; rows: number; cpuMs: number };
}

function sameToken(a: string | null, b: string): boolean {
  if (a === null || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

async function runItems(
  deps: PeerServerDeps,
  items: PeerItem[],
  payload: Float32Array,
): Promise<{ output: Float32Array; rows: number[] }> {
  if (firstNonFinite(payload) >= 0) {
    throw new ApiError("bad_request", "Cannot run peer items: a value is not finite");
  }
  const width = payload.length / items.reduce((sum, item) => sum + item.rows, 0);
  let offset = 0;
  const outputs = await Promise.all(items.map((item) => {
    const input = payload.slice(offset, offset + item.rows * width);
    offset += item.rows * width;
    return deps.runLocal(item.layer, item.expert, input, item.rows);
  }));
  return { output: concat(outputs), rows: items.map((item) => item.rows) };
}

function concat(outputs: readonly Float32Array[]): Float32Array {
  const output = new Float32Array(outputs.reduce((sum, o) => sum + o.length, 0));
  let at = 0;
  for (const o of outputs) {
    output.set(o, at);
    at += o.length;
  }
  return output;
}

async function runLayerFrame(
  deps: PeerServerDeps,
  items: PeerLayerData[],
): Promise<{ output: Float32Array; rows: number[] }> {
  if (!deps.runLayerItems) {
    throw new ApiError("bad_request", "Cannot run layer items: this backend runs per expert");
  }
  const outputs = await deps.runLayerItems(items);
  return { output: concat(outputs), rows: items.map((item) => item.rows) };
}

/** Upgrades `request` to the peer channel. */
export function acceptPeer(request: Request, deps: PeerServerDeps): Response {
  const { socket, response } = Deno.upgradeWebSocket(request);
  socket.binaryType = "arraybuffer";
  let peer: string | null = null;
  const send = (bytes: Uint8Array<ArrayBuffer>) => {
    deps.net?.sent(bytes.byteLength);
    socket.send(bytes);
  };
  socket.onmessage = async (event: MessageEvent<ArrayBuffer>) => {
    const receivedAt = performance.now();
    deps.net?.received(event.data.byteLength);
    let frame;
    try {
      frame = decodePeerFrame(event.data);
    } catch (error) {
      socket.close(1003, (error as Error).message.slice(0, 120));
      return;
    }
    const { header, payload } = frame;
    if (peer === null) {
      if (
        header.t !== "hello" || (deps.token !== undefined && !sameToken(header.token, deps.token))
      ) {
        deps.logger.warn("peer refused", { reason: "missing or wrong internal token" });
        socket.close(1008, "missing or wrong internal token");
        return;
      }
      peer = header.from;
      send(encodePeerFrame({ t: "welcome", backend: deps.backendId }));
      return;
    }
    if (header.t !== "run" && header.t !== "layer") return;
    try {
      const running = header.t === "run"
        ? runItems(deps, header.items, payload)
        : runLayerFrame(deps, unpackLayerItems(header.items, payload, deps.width));
      const decodedAt = performance.now();
      const { output, rows } = await running;
      const answeredAt = performance.now();
      if (socket.readyState === WebSocket.OPEN) {
        const serveMs = answeredAt - receivedAt;
        send(encodePeerFrame({ t: "result", id: header.id, ok: true, rows, serveMs }, output));
      }
      if (deps.served) {
        deps.served.frames++;
        deps.served.rows += rows.reduce((sum, n) => sum + n, 0);
        deps.served.cpuMs += decodedAt - receivedAt + performance.now() - answeredAt;
      }
    } catch (error) {
      const code = error instanceof ApiError ? error.code : "internal";
      if (socket.readyState === WebSocket.OPEN) {
        send(encodePeerFrame({
          t: "result",
          id: header.id,
          ok: false,
          error: (error as Error).message,
          code,
        }));
      }
    }
  };
  socket.onerror = () => {};
  return response;
}
