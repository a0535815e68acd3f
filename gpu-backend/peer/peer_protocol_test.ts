import assert from "node:assert/strict";
import { decodePeerFrame, encodePeerFrame } from "./peer_protocol.ts";

Deno.test("peer frames round-trip header and FP32 payload, aligned for every header length", () => {
  for (let pad = 0; pad < 4; pad++) {
    const header = {
      t: "run" as const,
      id: 7 + pad,
      items: [{ layer: 0, expert: 3, rows: 2 }, { layer: 0, expert: 10 ** pad, rows: 1 }],
    };
    const payload = Float32Array.from({ length: 6 * 4 }, (_, i) => i / 3);
    const bytes = encodePeerFrame(header, payload);
    const frame = decodePeerFrame(bytes.buffer);
    assert.deepEqual(frame.header, header);
    assert.deepEqual([...frame.payload], [...payload]);
  }
});

Deno.test("a frame without payload decodes to an empty payload", () => {
  const frame = decodePeerFrame(encodePeerFrame({ t: "welcome", backend: "b1" }).buffer);
  assert.deepEqual(frame.header, { t: "welcome", backend: "b1" });
  assert.equal(frame.payload.length, 0);
});

Deno.test("decodePeerFrame() rejects malformed frames", () => {
  assert.throws(() => decodePeerFrame(new ArrayBuffer(2)), /shorter than 4 bytes/);
  const bad = new Uint8Array(8);
  new DataView(bad.buffer).setUint32(0, 100, true);
  assert.throws(() => decodePeerFrame(bad.buffer), /exceeds the frame/);
});
