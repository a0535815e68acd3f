/**
 * @module The pools `deno task sim --scale` knows, and the offered load derived for them.
 *
 * - `256xN` (N = 32, 64, 144, 288): 256 routed experts, top-8, 8 groups / top-4 groups,
 *   DeepSeek-V3-sized experts on H100-class accelerators, 8 MoE layers (assumed: enough
 *   layers for per-layer skew to vary, few enough for a simulated day in seconds),
 *   Switchyard's default redundancy.
 * - `dsv3x144`: the DeepSeek-V3 shape — 58 MoE layers × 256 experts, top-8, 8 groups,
 *   top-4 groups, 32 redundant experts (288 slots on 144 H200-class accelerators).
 * - `demo`: the demo model on 2 accelerators whose `a`, `b` are measured here with
 *   onnxruntime (`calibrateFromOrt`); the validation compares it with the real pool.
 */
import type { ModelShapeSim } from "./workload.ts";
import { acceleratorParams, assumed, derived, type DeviceParams, type Param } from "./params.ts";
import { hopMs, networkShape, serviceMs } from "./devices.ts";

/** One simulated pool. */
export interface Scale {
  name: string;
  description: string;
  devices: number;
  shape: ModelShapeSim;
  /**
   * The balancer's `redundancy` for this pool (absent: the config default); slots per
   * accelerator = `slotsPerBackend(experts, devices, redundancy)`.
   */
  redundancy?: number;
  device: DeviceParams;
  rowsMin: number;
  rowsMax: number;
  /** Requests per step (the batcher's max). */
  batchMax: number;
  sloMs: Param;
  /** Peak offered load ÷ ideal capacity (perfect balance, full batches). */
  loadFactor: Param;
  /** Virtual seconds of the compressed day. */
  dayS: number;
  overlap: boolean;
}

/** 256 experts, top-8, group-limited like DeepSeek-V3. */
const SHAPE_256: Omit<ModelShapeSim, "layers"> = {
  experts: 256,
  topK: 8,
  groups: 8,
  topkGroup: 4,
};

/** Virtual seconds of the day per pool size: offered requests stay near a million per day. */
const DAY_S: Record<number, number> = { 32: 600, 64: 240, 144: 120, 288: 60 };

function wide(devices: number): Scale {
  const redundancySlots = Math.ceil(256 / devices) + Math.ceil((0.25 * 256) / devices - 1e-9);
  return {
    name: `256x${devices}`,
    description: `256 experts × ${devices} H100-class accelerators, 8 MoE layers, top-8 ` +
      `(8 groups, top-4 groups), DeepSeek-V3-sized experts`,
    devices,
    shape: { ...SHAPE_256, layers: 8 },
    device: acceleratorParams(redundancySlots, "h100"),
    rowsMin: 128,
    rowsMax: 384,
    batchMax: 8 * devices,
    sloMs: assumed(250, "ms", "end-to-end budget of one request's MoE pass"),
    loadFactor: assumed(0.4, "of ideal capacity at the diurnal peak", "leaves headroom off-peak"),
    dayS: DAY_S[devices] ?? 600,
    overlap: true,
  };
}

/** Every scale by name (the demo scale is built at run time: it measures). */
export const SCALES: Record<string, Scale> = {
  "256x32": wide(32),
  "256x64": wide(64),
  "256x144": wide(144),
  "256x288": wide(288),
  dsv3x144: {
    name: "dsv3x144",
    description: "DeepSeek-V3 shape: 58 MoE layers × 256 experts, top-8, 8 groups / top-4 " +
      "groups, 32 redundant experts, 144 H200-class accelerators",
    devices: 144,
    shape: { ...SHAPE_256, layers: 58 },
    // ceil(256 / 144) = 2 slots each, no spare: 288 slots = 256 experts + 32 redundant.
    redundancy: 0,
    device: acceleratorParams(2, "h200"),
    rowsMin: 128,
    rowsMax: 384,
    batchMax: 2 * 144,
    sloMs: assumed(1000, "ms", "end-to-end budget of one request's 58-layer MoE pass"),
    loadFactor: assumed(0.4, "of ideal capacity at the diurnal peak", "leaves headroom off-peak"),
    dayS: 300,
    overlap: true,
  },
};

/** Names `--scale` accepts. */
export const SCALE_NAMES = [...Object.keys(SCALES), "demo"];

/** Ms of one step of `requests` requests of mean rows at perfect balance. */
export function idealStepMs(scale: Scale, requests: number): number {
  const meanRows = (scale.rowsMin + scale.rowsMax) / 2;
  const rows = requests * meanRows;
  const perDevice = (rows * scale.shape.topK) / scale.devices;
  const compute = serviceMs(scale.device.fixedMs.value, scale.device.perRowMs.value, perDevice);
  const hop = hopMs(
    networkShape(scale.devices, scale.device),
    (rows / scale.devices) * scale.shape.topK * scale.device.rowBytes.value,
  );
  const layer = scale.overlap ? Math.max(compute, hop) : compute + hop;
  return scale.shape.layers * layer;
}

/** Requests/s at the diurnal peak: load factor × ideal capacity. */
export function peakRate(scale: Scale): Param {
  const capacity = (scale.batchMax / idealStepMs(scale, scale.batchMax)) * 1000;
  return derived(
    scale.loadFactor.value * capacity,
    "requests/s",
    `load factor ${scale.loadFactor.value} (assumed) × ideal capacity ${
      capacity.toFixed(0)
    } req/s (full batches of ${scale.batchMax}, perfect balance)`,
  );
}
