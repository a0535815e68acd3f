import assert from "node:assert/strict";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { PeerClient, PeerUnavailableError } from "./peer_client.ts";
import { decodePeerFrame, encodePeerFrame } from "./peer_protocol.ts";

Deno.test("PeerClient fails rows a hung peer never answers, and marks it down", async () => {
  // A peer that welcomes the client, then never answers (as a SIGSTOPped process would).
  let frames = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.binaryType = "arraybuffer";
    socket.onmessage = (event: MessageEvent<ArrayBuffer>) => {
      const frame = decodePeerFrame(event.data);
      if (frame.header.t === "hello") {
        socket.send(encodePeerFrame({ t: "welcome", backend: "hung" }));
      } else frames++;
    };
    return response;
  });
  const logger = new MemoryLogger();
  const client = new PeerClient({
    peerId: "hung",
    url: `http://127.0.0.1:${server.addr.port}`,
    selfId: "me",
    token: undefined,
    logger,
    answerTimeoutMs: 200,
    reconnectDelayMs: 60_000,
  });
  try {
    const error = await client.run(0, 1, new Float32Array(4), 1).then(
      () => undefined,
      (e: Error) => e,
    );
    assert.ok(error instanceof PeerUnavailableError, String(error));
    assert.match(error.message, /no answer within 200 ms/);
    assert.equal(frames, 1);
    assert.equal(client.available, false, "marked down until the reconnect delay");
    assert.match(String(logger.find("peer unavailable")[0]?.fields["reason"]), /no answer/);
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("PeerClient doubles its reconnect delay while a peer never welcomes, up to the cap", async () => {
  // Accepts TCP and never answers the WebSocket handshake (a SIGSTOPped process).
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })().catch(() => {});
  let now = 0;
  const client = new PeerClient({
    peerId: "hung",
    url: `http://127.0.0.1:${listener.addr.port}`,
    selfId: "me",
    token: undefined,
    logger: new MemoryLogger(),
    connectTimeoutMs: 50,
    reconnectDelayMs: 100,
    maxReconnectDelayMs: 300,
    now: () => now,
  });
  try {
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const error = await client.run(0, 1, new Float32Array(4), 1).then(() => null, (e) => e);
      assert.ok(error instanceof PeerUnavailableError);
      const start = now;
      while (!client.available) now += 10;
      delays.push(now - start);
    }
    assert.deepEqual(delays, [100, 200, 300, 300]);
  } finally {
    client.close();
    listener.close();
    for (const conn of held) conn.close();
    await accepting;
  }
});
