import assert from "node:assert/strict";
import {
  decodePeerFrame,
  encodePeerFrame,
  packLayerItems,
  unpackLayerItems,
} from "./peer_protocol.ts";

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

Deno.test("layer items round-trip through a frame and come back as views", () => {
  const items = [
    {
      layer: 1,
      rows: 2,
      values: Float32Array.of(1, 2, 3, 4, 5, 6),
      assignRow: Int32Array.of(0, 1, 1),
      assignExpert: Int32Array.of(7, 2, 30),
      assignWeight: Float32Array.of(0.5, 0.25, 0.75),
    },
    {
      layer: 0,
      rows: 1,
      values: Float32Array.of(-1, -2, -3),
      assignRow: Int32Array.of(0),
      assignExpert: Int32Array.of(4),
      assignWeight: Float32Array.of(1),
    },
  ];
  const header = {
    t: "layer" as const,
    id: 3,
    items: items.map((i) => ({ layer: i.layer, rows: i.rows, assigned: i.assignRow.length })),
  };
  const frame = decodePeerFrame(encodePeerFrame(header, packLayerItems(items)).buffer);
  assert.deepEqual(frame.header, header);
  const decoded = unpackLayerItems(header.items, frame.payload, 3);
  decoded.forEach((item, i) => {
    assert.equal(item.layer, items[i]!.layer);
    assert.deepEqual([...item.values], [...items[i]!.values]);
    assert.deepEqual([...item.assignRow], [...items[i]!.assignRow]);
    assert.deepEqual([...item.assignExpert], [...items[i]!.assignExpert]);
    assert.deepEqual([...item.assignWeight], [...items[i]!.assignWeight]);
    assert.equal(item.values.buffer, frame.payload.buffer, "no copy");
  });
});

Deno.test("unpackLayerItems() rejects headers that disagree with the payload", () => {
  const payload = new Float32Array(5);
  assert.throws(
    () => unpackLayerItems([{ layer: 0, rows: 2, assigned: 1 }], payload, 2),
    /shorter/,
  );
  assert.throws(() => unpackLayerItems([{ layer: 0, rows: 1, assigned: 0 }], payload, 2), /longer/);
  assert.throws(
    () => unpackLayerItems([{ layer: 0, rows: -1, assigned: 0 }], payload, 2),
    /bad layer item/,
  );
});
