/**
 * @module Simulator constants with their provenance. Every number the simulator uses is a
 * {@linkcode Param}: **measured** on this machine (with how), **published** (with the
 * source), or **assumed** (chosen here, with why). The run prints them all; nothing is
 * called "calibrated" unless it was measured.
 */

/** Where a constant comes from. */
export type Provenance = "measured" | "published" | "assumed" | "derived";

/** One constant. */
export interface Param {
  value: number;
  unit: string;
  provenance: Provenance;
  /** Source (published), method (measured), reason (assumed) or formula (derived). */
  source: string;
}

/** Shorthands. */
export const published = (value: number, unit: string, source: string): Param => ({
  value,
  unit,
  provenance: "published",
  source,
});
export const assumed = (value: number, unit: string, source: string): Param => ({
  value,
  unit,
  provenance: "assumed",
  source,
});
export const measured = (value: number, unit: string, source: string): Param => ({
  value,
  unit,
  provenance: "measured",
  source,
});
export const derived = (value: number, unit: string, source: string): Param => ({
  value,
  unit,
  provenance: "derived",
  source,
});

/** The accelerator, network and model constants of one simulated pool. */
export interface DeviceParams {
  /** Device ms per layer execution, fixed part (`a`). */
  fixedMs: Param;
  /** Device ms per expert row (`b`). */
  perRowMs: Param;
  /** Bytes of one expert's weights. */
  expertBytes: Param;
  /** Expert weights one accelerator can hold (all layers together), in experts. */
  memoryExperts: Param;
  /** Bytes per expert row sent and returned between accelerators (dispatch + combine). */
  rowBytes: Param;
  /** One-way latency of a transfer between accelerators, ms. */
  linkLatencyMs: Param;
  /** Bandwidth between accelerators of one node, bytes/ms. */
  intraNodeBytesPerMs: Param;
  /** Bandwidth between nodes, per accelerator, bytes/ms. */
  interNodeBytesPerMs: Param;
  /** Accelerators per node. */
  devicesPerNode: Param;
  /** Bandwidth for loading expert weights into device memory, bytes/ms. */
  weightLoadBytesPerMs: Param;
}

const GB = 1e9;
/** Bytes/s → bytes/ms. */
const perMs = (bytesPerS: number) => bytesPerS / 1000;

const H100 = "NVIDIA H100 SXM5 datasheet (nvidia.com/en-us/data-center/h100)";
const H200 = "NVIDIA H200 SXM datasheet (nvidia.com/en-us/data-center/h200)";
const DSV3 = "DeepSeek-V3 config.json (huggingface.co/deepseek-ai/DeepSeek-V3)";
const DEEPEP = "DeepEP README, low-latency kernels (github.com/deepseek-ai/DeepEP): H800 + " +
  "CX7 400 Gb/s, 128 tokens, hidden 7168, top-8, FP8 dispatch";

/** Published H100/H200 figures the accelerator profiles derive from. */
export const HARDWARE = {
  h100Fp8Flops: published(1979e12, "FLOP/s dense FP8", H100),
  h100HbmBytesPerS: published(3.35e12, "bytes/s HBM3", H100),
  h100HbmBytes: published(80 * GB, "bytes", H100),
  h200HbmBytesPerS: published(4.8e12, "bytes/s HBM3e", H200),
  h200HbmBytes: published(141 * GB, "bytes", H200),
  nvlinkBytesPerS: published(450 * GB, "bytes/s per direction (900 GB/s total NVLink 4)", H100),
  ibBytesPerS: published(
    50 * GB,
    "bytes/s per GPU (400 Gb/s ConnectX-7 NDR, one per GPU in a DGX H100)",
    "NVIDIA DGX H100 user guide",
  ),
  pcieBytesPerS: published(64 * GB, "bytes/s (PCIe 5.0 x16, one direction)", "PCI-SIG PCIe 5.0"),
  gpusPerNode: published(8, "GPUs", "NVIDIA DGX H100 user guide"),
  deepEpDispatchMs: published(0.077, "ms per dispatch at EP 8", DEEPEP),
  deepEpDispatchBytesPerS: published(98 * GB, "bytes/s RDMA during that dispatch", DEEPEP),
  dsHidden: published(7168, "hidden size", DSV3),
  dsMoeIntermediate: published(2048, "moe_intermediate_size", DSV3),
} as const;

/**
 * The fixed part of an all-to-all hop, derived from DeepEP's published dispatch: 77 µs at
 * EP 8 for 128 tokens × 8 experts × 7168 FP8 bytes (7.34 MB) moved at its published
 * 98 GB/s — 74.9 µs of it is bandwidth, leaving ~2 µs of latency per hop.
 */
const DEEPEP_DISPATCH_BYTES = 128 * 8 * 7168;
const DEEPEP_LATENCY_MS = HARDWARE.deepEpDispatchMs.value -
  DEEPEP_DISPATCH_BYTES / perMs(HARDWARE.deepEpDispatchBytesPerS.value);

/** Assumptions shared by the accelerator profiles. */
export const ASSUMED = {
  mfu: assumed(0.5, "fraction of peak FLOP/s", "grouped-GEMM efficiency; not measured here"),
  launchMs: assumed(0.02, "ms per layer execution", "kernel launch + dispatch overhead"),
  expertMemoryShare: assumed(
    0.3,
    "of HBM for routed-expert weights",
    "rest: dense layers, KV cache, activations",
  ),
} as const;

/**
 * An H100-class accelerator serving DeepSeek-V3-sized experts (FP8 weights):
 * `a = launch + slots · expertBytes / HBM bandwidth` (every hosted expert's weights read
 * once per layer execution), `b = 2 · expert params / (FP8 peak · MFU)`.
 */
export function acceleratorParams(slotsPerLayer: number, kind: "h100" | "h200"): DeviceParams {
  const params = 3 * HARDWARE.dsHidden.value * HARDWARE.dsMoeIntermediate.value;
  const expertBytes = params; // FP8: one byte per parameter
  const hbm = kind === "h100" ? HARDWARE.h100HbmBytesPerS : HARDWARE.h200HbmBytesPerS;
  const hbmBytes = kind === "h100" ? HARDWARE.h100HbmBytes : HARDWARE.h200HbmBytes;
  const weightMs = (slotsPerLayer * expertBytes) / perMs(hbm.value);
  return {
    fixedMs: derived(
      ASSUMED.launchMs.value + weightMs,
      "ms",
      `launch ${ASSUMED.launchMs.value} ms (assumed) + ${slotsPerLayer} experts × ` +
        `${(expertBytes / 1e6).toFixed(1)} MB ÷ ${kind.toUpperCase()} HBM (published)`,
    ),
    perRowMs: derived(
      (2 * params) / (HARDWARE.h100Fp8Flops.value * ASSUMED.mfu.value) * 1000,
      "ms/row",
      `2 × ${(params / 1e6).toFixed(1)} M params ÷ (FP8 peak (published) × MFU ` +
        `${ASSUMED.mfu.value} (assumed))`,
    ),
    expertBytes: derived(expertBytes, "bytes", `3 × hidden × moe_intermediate, FP8 (${DSV3})`),
    memoryExperts: derived(
      Math.floor((hbmBytes.value * ASSUMED.expertMemoryShare.value) / expertBytes),
      "experts",
      `${kind.toUpperCase()} HBM (published) × ${ASSUMED.expertMemoryShare.value} (assumed) ÷ expert bytes`,
    ),
    rowBytes: derived(
      3 * HARDWARE.dsHidden.value,
      "bytes/row",
      "hidden × (1 byte FP8 dispatch + 2 bytes BF16 combine), one round trip",
    ),
    linkLatencyMs: derived(
      DEEPEP_LATENCY_MS,
      "ms per all-to-all hop",
      "DeepEP dispatch at EP 8 (77 µs, published) minus its 7.34 MB at the published " +
        "98 GB/s: the part no bandwidth explains",
    ),
    intraNodeBytesPerMs: derived(perMs(HARDWARE.nvlinkBytesPerS.value), "bytes/ms", "NVLink 4"),
    interNodeBytesPerMs: derived(perMs(HARDWARE.ibBytesPerS.value), "bytes/ms", "400 Gb/s IB"),
    devicesPerNode: HARDWARE.gpusPerNode,
    weightLoadBytesPerMs: derived(
      perMs(HARDWARE.pcieBytesPerS.value),
      "bytes/ms",
      "host → HBM over PCIe 5.0 x16 (published)",
    ),
  };
}

/** `key  value unit  provenance  source` lines for a parameter set. */
export function provenanceLines(params: Record<string, Param>): string[] {
  return Object.entries(params).map(([key, p]) =>
    `| ${key} | ${formatValue(p.value)} ${p.unit} | ${p.provenance} | ${p.source} |`
  );
}

function formatValue(value: number): string {
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-3) return value.toExponential(3);
  return Number(value.toPrecision(4)).toString();
}
