// deno-lint-ignore-file no-console
/**
 * @module A peer that computes nothing, for `bench:peer-hop`'s channel step: the real
 * peer server (`acceptPeer`) answering every layer item with zeros of its shape, so a
 * round trip measures the channel alone (frames, sockets, codecs). `GET /stats` gives
 * its counters (frames and rows served, host-thread ms) and the CPU time of the whole
 * process (all threads, user + system). Prints its port and waits.
 *
 * `deno run -A tools/bench/peer_hop/echo_peer.ts <d_model>`
 */
import process from "node:process";
import { acceptPeer } from "../../../gpu-backend/peer/peer_server.ts";
import type { PeerLayerData } from "../../../gpu-backend/peer/peer_protocol.ts";
import { silentLogger } from "../../../shared/logger.ts";

const width = Number(Deno.args[0] ?? 256);
const served = { frames: 0, rows: 0, cpuMs: 0 };

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
  if (new URL(request.url).pathname === "/stats") {
    const { user, system } = process.cpuUsage();
    return Response.json({ ...served, processCpuMs: (user + system) / 1000 });
  }
  return acceptPeer(request, {
    backendId: "echo",
    token: undefined,
    logger: silentLogger,
    width,
    served,
    runLocal: (_layer, _expert, _input, rows) => Promise.resolve(new Float32Array(rows * width)),
    runLayerItems: (items: PeerLayerData[]) =>
      Promise.resolve(items.map((item) => new Float32Array(item.rows * width))),
  });
});
console.log(server.addr.port);
