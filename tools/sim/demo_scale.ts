/**
 * @module The `demo` scale: the demo model (generated into `models/demo` when missing) on
 * 2 accelerators whose service time `a + b·rows` is MEASURED here: `calibrateFromOrt()`
 * times one real expert with onnxruntime on this machine's CPU and fits the line.
 */
import { join } from "node:path";
import { calibrateFromOrt } from "../../gpu-backend/execution/calibrate.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { benchModelDir } from "../bench/bench_model.ts";
import { assumed, type DeviceParams, measured } from "./params.ts";
import { measureChannel } from "../bench/peer_hop/channel.ts";
import type { Scale } from "./scales.ts";

/** Measured device parameters of the demo model on this machine, and its manifest. */
export async function demoDevice(
  modelDir?: string,
): Promise<{ device: DeviceParams; manifest: ModelManifest; dir: string }> {
  const dir = await benchModelDir({ dir: modelDir, simulated: false, experts: 32, topK: 2 });
  const manifest = JSON.parse(await Deno.readTextFile(join(dir, "moe.json"))) as ModelManifest;
  const calibration = await calibrateFromOrt(dir, manifest);
  const how = `calibrateFromOrt(${dir}): one expert, batches ` +
    `${calibration.samples.map((s) => s.rows).join("/")}, median of 5, least squares`;
  const rowBytes = manifest.d_model * 4 * 2;
  // The peer hop on loopback, measured in this run as `bench:peer-hop` step 1 does.
  const channel = await measureChannel({
    width: manifest.d_model,
    sizes: [1, 64],
    trips: 40,
    rounds: 1,
    sockets: ["nodelay"],
  });
  const one = channel.find((c) => c.rows === 1)!.p50Ms;
  const many = channel.find((c) => c.rows === 64)!.p50Ms;
  const hopHow = "bench:peer-hop step 1 in this run (tools/bench/peer_hop/channel.ts): p50 " +
    "round trip of layer items to a peer process computing nothing, TCP_NODELAY WebSocket";
  return {
    dir,
    manifest,
    device: {
      fixedMs: measured(calibration.fixedMs, "ms", how),
      perRowMs: measured(calibration.perRowMs, "ms/row", how),
      expertBytes: measured(
        3 * manifest.d_model * manifest.d_ff * 4,
        "bytes",
        "float32 weights of one expert of the manifest",
      ),
      memoryExperts: assumed(
        manifest.layers * manifest.experts,
        "experts",
        "a backend process can hold the whole demo model",
      ),
      rowBytes: measured(rowBytes, "bytes/row", "d_model float32 values, there and back"),
      linkLatencyMs: measured(one, "ms per peer round trip (1 row)", hopHow),
      intraNodeBytesPerMs: measured(
        (63 * rowBytes) / Math.max(many - one, 1e-3),
        "bytes/ms",
        `${hopHow}: 63 rows more (64 vs 1) ÷ the extra time`,
      ),
      interNodeBytesPerMs: assumed(1e6, "bytes/ms", "(one node)"),
      devicesPerNode: assumed(2, "accelerators", "both backends on this machine"),
      weightLoadBytesPerMs: assumed(1e6, "bytes/ms", "ONNX session creation from disk, ~1 GB/s"),
    },
  };
}

/** The demo scale (measures on first call). */
export async function demoScale(modelDir?: string): Promise<Scale> {
  const { device, manifest } = await demoDevice(modelDir);
  return {
    name: "demo",
    description: `the demo model (${manifest.layers} layers × ${manifest.experts} experts, ` +
      `top-${manifest.top_k}) on 2 CPU "accelerators" (a, b measured here)`,
    devices: 2,
    shape: {
      layers: manifest.layers,
      experts: manifest.experts,
      topK: manifest.top_k,
      groups: manifest.groups,
      topkGroup: manifest.topk_group ?? manifest.groups,
    },
    device,
    rowsMin: 1,
    rowsMax: 8,
    batchMax: 16,
    sloMs: assumed(250, "ms", "same budget as the accelerator scales"),
    loadFactor: assumed(0.4, "of ideal capacity at the diurnal peak", "as the other scales"),
    dayS: 120,
    overlap: false,
  };
}
