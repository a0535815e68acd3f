/**
 * @module `bench:peer-hop` step 1: the expert channel alone. A peer that computes
 * nothing (`echo_peer.ts`, its own process) and this process's `PeerClient`; layer items
 * of 1, 8 and 64 rows round-trip one at a time (idle), over the channel's socket
 * (`NoDelayWebSocket`, TCP_NODELAY) and over Deno's own `WebSocket` (what the channel
 * used before), in alternating rounds. CPU per row on each side two ways: the channel's
 * own host-thread counters (client `sent.cpuMs`, server `served.cpuMs`: wall time of
 * its synchronous sections) and each process's CPU time (all threads, sockets included;
 * the entry side's includes its waiting loop).
 */
import { PeerClient } from "../../../gpu-backend/peer/peer_client.ts";
import type { PeerSocket } from "../../../gpu-backend/peer/nodelay_websocket.ts";
import type { PeerLayerData } from "../../../gpu-backend/peer/peer_protocol.ts";
import { silentLogger } from "../../../shared/logger.ts";
import { quantile } from "../stats.ts";
import process from "node:process";

/** CPU ms of this process so far (all threads, user + system). */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One socket × size cell. */
export interface ChannelCell {
  socket: "nodelay" | "deno";
  rows: number;
  trips: number;
  p50Ms: number;
  p99Ms: number;
  /** Host-thread µs per row: entry side (pack, send, read the answer), peer side (decode, answer). */
  sendUsPerRow: number;
  serveUsPerRow: number;
  /** Process CPU µs per row (all threads, user + system, sockets included) of each side. */
  entryProcessUsPerRow: number;
  peerProcessUsPerRow: number;
}

/** Options of {@linkcode measureChannel}. */
export interface ChannelOptions {
  width: number;
  sizes: readonly number[];
  /** Round trips per socket, size and round. */
  trips: number;
  rounds: number;
  /** Sockets to measure; default both. */
  sockets?: readonly ChannelCell["socket"][];
}

const SOCKETS = {
  nodelay: undefined,
  // Deno's own client, as the channel used it before: Nagle on, header and payload apart.
  deno: (url: string) => {
    const socket = new WebSocket(url);
    socket.binaryType = "arraybuffer";
    return socket as unknown as PeerSocket;
  },
} as const;

/** Round trips over both sockets against a peer process that computes nothing. */
export async function measureChannel(options: ChannelOptions): Promise<ChannelCell[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./echo_peer.ts", import.meta.url).pathname, String(options.width)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const url = `http://127.0.0.1:${port}`;
  const stats = async () =>
    (await (await fetch(`${url}/stats`)).json()) as {
      rows: number;
      cpuMs: number;
      processCpuMs: number;
    };
  type Cell = {
    latencies: number[];
    send: number;
    serve: number;
    entry: number;
    peer: number;
    rows: number;
  };
  const cells = new Map<string, Cell>();
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const kind of options.sockets ?? ["nodelay", "deno"] as const) {
        const open = SOCKETS[kind];
        const client = new PeerClient({
          peerId: "echo",
          url,
          selfId: "bench",
          token: undefined,
          logger: silentLogger,
          // Deno's socket stalls ~40 ms per frame: give it time rather than mark the peer down.
          answerTimeoutMs: 10_000,
          ...(open ? { openSocket: open } : {}),
        });
        await client.runLayer(item(1, options.width)); // connect and warm up
        for (const rows of options.sizes) {
          const key = `${kind}/${rows}`;
          const cell: Cell = cells.get(key) ??
            { latencies: [], send: 0, serve: 0, entry: 0, peer: 0, rows: 0 };
          const sendBefore = client.sent.cpuMs;
          const serveBefore = await stats();
          const entryBefore = processCpuMs();
          for (let i = 0; i < options.trips; i++) {
            const data = item(rows, options.width);
            const started = performance.now();
            await client.runLayer(data);
            cell.latencies.push(performance.now() - started);
          }
          cell.entry += processCpuMs() - entryBefore;
          const serveAfter = await stats();
          cell.send += client.sent.cpuMs - sendBefore;
          cell.serve += serveAfter.cpuMs - serveBefore.cpuMs;
          cell.peer += serveAfter.processCpuMs - serveBefore.processCpuMs;
          cell.rows += rows * options.trips;
          cells.set(key, cell);
        }
        client.close();
      }
    }
  } finally {
    child.kill();
    await child.status;
  }
  return [...cells].map(([key, cell]) => {
    const [socket, rows] = key.split("/") as [ChannelCell["socket"], string];
    return {
      socket,
      rows: Number(rows),
      trips: cell.latencies.length,
      p50Ms: quantile(cell.latencies, 0.5),
      p99Ms: quantile(cell.latencies, 0.99),
      sendUsPerRow: (cell.send * 1000) / cell.rows,
      serveUsPerRow: (cell.serve * 1000) / cell.rows,
      entryProcessUsPerRow: (cell.entry * 1000) / cell.rows,
      peerProcessUsPerRow: (cell.peer * 1000) / cell.rows,
    };
  });
}

/** A layer item of `rows` rows, each assigned to two experts. */
function item(rows: number, width: number): PeerLayerData {
  const assigned = 2 * rows;
  return {
    layer: 0,
    rows,
    values: Float32Array.from({ length: rows * width }, (_, i) => Math.sin(i)),
    assignRow: Int32Array.from({ length: assigned }, (_, i) => Math.floor(i / 2)),
    assignExpert: Int32Array.from({ length: assigned }, (_, i) => i % 8),
    assignWeight: new Float32Array(assigned).fill(0.5),
  };
}
