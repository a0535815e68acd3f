/** @module Tests of the safetensors reader and the checkpoint directory: every check fires. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../model/test_helpers.ts";
import { openCheckpoint, toFloat32 } from "./checkpoint.ts";
import { openSafetensors } from "./safetensors.ts";
import {
  encodeSafetensors,
  roundTo,
  syntheticCheckpoint,
  writeCheckpoint,
} from "./synthetic_checkpoint.ts";

/** A file with the given header object and `data` bytes after it. */
function rawFile(header: unknown, data = new Uint8Array(0)): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

Deno.test("openSafetensors() reads F32, F16 and BF16 tensors back exactly", async () => {
  await withTempDir(async (dir) => {
    const values = Float32Array.from([1.5, -2.25, 3.1, 1e-3, 65504, -0.1]);
    const bytes = encodeSafetensors([
      ["a", { dtype: "F32", shape: [2, 3], data: values }],
      ["b", { dtype: "F16", shape: [6], data: roundTo(values, "F16") }],
      ["c", { dtype: "BF16", shape: [3, 2], data: roundTo(values, "BF16") }],
    ]);
    const path = join(dir, "m.safetensors");
    await Deno.writeFile(path, bytes);
    const file = await openSafetensors(path);
    try {
      assert.deepEqual([...file.tensors.keys()], ["a", "b", "c"]);
      assert.deepEqual(file.metadata, { format: "pt" });
      for (const [name, dtype] of [["a", "F32"], ["b", "F16"], ["c", "BF16"]] as const) {
        const got = toFloat32(await file.read(name), dtype, name);
        assert.deepEqual(got, roundTo(values, dtype));
      }
      assert.equal(roundTo(Float32Array.of(3.1), "BF16")[0], 3.09375);
    } finally {
      file.close();
    }
  });
});

Deno.test("openSafetensors() rejects bad headers, dtypes, offsets, overlaps and holes", async () => {
  await withTempDir(async (dir) => {
    const four = new Uint8Array(4);
    const cases: [Uint8Array, RegExp][] = [
      [new Uint8Array(5), /too short for the 8-byte header length/],
      [
        (() => {
          const b = rawFile({});
          new DataView(b.buffer).setBigUint64(0, 999n, true);
          return b;
        })(),
        /header length 999 runs past the end/,
      ],
      [rawFile([1, 2]), /header is not a JSON object/],
      [
        rawFile({ w: { dtype: "F33", shape: [1], data_offsets: [0, 4] } }, four),
        /unknown dtype "F33"/,
      ],
      [rawFile({ w: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, four), /bad shape/],
      [
        rawFile({ w: { dtype: "F32", shape: [1], data_offsets: [4, 0] } }, four),
        /bad data_offsets/,
      ],
      [
        rawFile({ w: { dtype: "F32", shape: [2], data_offsets: [0, 4] } }, four),
        /spans 4 bytes, F32 \[2\] needs 8/,
      ],
      [
        rawFile({
          a: { dtype: "F16", shape: [2], data_offsets: [0, 4] },
          b: { dtype: "F16", shape: [1], data_offsets: [2, 4] },
        }, four),
        /overlaps the previous tensor/,
      ],
      [
        rawFile({ a: { dtype: "F16", shape: [1], data_offsets: [2, 4] } }, four),
        /bytes \[0, 2\) before tensor "a"/,
      ],
      [
        rawFile({ a: { dtype: "F16", shape: [1], data_offsets: [0, 2] } }, four),
        /cover 2 bytes but the data buffer has 4/,
      ],
    ];
    for (const [i, [bytes, message]] of cases.entries()) {
      const path = join(dir, `bad${i}.safetensors`);
      await Deno.writeFile(path, bytes);
      await assert.rejects(openSafetensors(path), message, `case ${i}`);
    }
  });
});

Deno.test("openCheckpoint() follows the shard index and checks tensor shapes", async () => {
  await withTempDir(async (dir) => {
    const checkpoint = syntheticCheckpoint("qwen2_moe");
    await writeCheckpoint(dir, checkpoint, 3);
    const opened = await openCheckpoint(dir);
    try {
      assert.deepEqual(opened.names(), [...checkpoint.tensors.keys()].sort());
      const name = "model.layers.1.mlp.experts.3.down_proj.weight";
      const tensor = await opened.read(name, [16, 12]);
      assert.equal(tensor.dtype, "BF16");
      assert.deepEqual(tensor.data, checkpoint.tensors.get(name)!.data);
      await assert.rejects(
        opened.read(name, [12, 16]),
        /is \[16,12\], expected \[12,16\] from config.json/,
      );
      await assert.rejects(opened.read("nope"), /the checkpoint has no tensor "nope"/);
    } finally {
      opened.close();
    }
  });
});
