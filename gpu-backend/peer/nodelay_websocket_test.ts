import assert from "node:assert/strict";
import { encodeClientFrame, NoDelayWebSocket } from "./nodelay_websocket.ts";

function echoServer(onSocket?: (socket: WebSocket) => void) {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const { socket, response } = Deno.upgradeWebSocket(request);
    socket.binaryType = "arraybuffer";
    socket.onmessage = (event) => socket.send(event.data);
    onSocket?.(socket);
    return response;
  });
}

function open(url: string): Promise<NoDelayWebSocket> {
  const socket = new NoDelayWebSocket(url);
  return new Promise((resolve, reject) => {
    socket.onopen = () => resolve(socket);
    socket.onclose = (event) => reject(new Error(event.reason));
  });
}

Deno.test("NoDelayWebSocket round-trips binary messages of every length class to Deno's server", async () => {
  const server = echoServer();
  const socket = await open(`ws://127.0.0.1:${server.addr.port}/`);
  try {
    // 7-bit, 16-bit and 64-bit lengths; odd sizes exercise the unaligned mask tail.
    for (const size of [0, 1, 125, 126, 1_101, 65_535, 65_536, 300_007]) {
      const sent = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      const answer = new Promise<ArrayBuffer>((resolve) =>
        socket.onmessage = (e) => resolve(e.data)
      );
      socket.send(sent);
      assert.deepEqual(new Uint8Array(await answer), sent, `size ${size}`);
    }
  } finally {
    socket.close();
    await server.shutdown();
  }
});

Deno.test("NoDelayWebSocket keeps the order of messages sent in one go", async () => {
  const server = echoServer();
  const socket = await open(`ws://127.0.0.1:${server.addr.port}/`);
  try {
    const got: number[] = [];
    const all = new Promise<void>((resolve) => {
      socket.onmessage = (e) => {
        got.push(new Uint8Array(e.data)[0]!);
        if (got.length === 50) resolve();
      };
    });
    for (let i = 0; i < 50; i++) socket.send(new Uint8Array(2_000).fill(i));
    await all;
    assert.deepEqual(got, Array.from({ length: 50 }, (_, i) => i));
  } finally {
    socket.close();
    await server.shutdown();
  }
});

Deno.test("NoDelayWebSocket reports the server's close code and reason", async () => {
  const server = echoServer((socket) => {
    socket.onmessage = () => socket.close(1008, "missing or wrong internal token");
  });
  const socket = await open(`ws://127.0.0.1:${server.addr.port}/`);
  try {
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.onclose = resolve
    );
    socket.send(new Uint8Array(4));
    assert.deepEqual(await closed, { code: 1008, reason: "missing or wrong internal token" });
  } finally {
    await server.shutdown();
  }
});

Deno.test("NoDelayWebSocket fails the handshake of a server that does not upgrade", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("no", { status: 401 }),
  );
  try {
    await assert.rejects(
      open(`ws://127.0.0.1:${server.addr.port}/`),
      /handshake refused: HTTP\/1.1 401/,
    );
    assert.throws(() => new NoDelayWebSocket("wss://127.0.0.1:1/"), /not a ws:\/\/ URL/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("encodeClientFrame() masks the payload with the key it carries", () => {
  const payload = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
  const frame = encodeClientFrame(0x2, payload.subarray(1));
  assert.equal(frame[0], 0x82);
  assert.equal(frame[1], 0x80 | 126);
  const length = new DataView(frame.buffer).getUint16(2);
  assert.equal(length, 299);
  const mask = frame.subarray(4, 8);
  const unmasked = frame.subarray(8).map((b, i) => b ^ mask[i % 4]!);
  assert.deepEqual(unmasked, payload.subarray(1));
});
