/**
 * @module Device and network models of the simulator, pure.
 *
 * - Service: one layer execution of `rows` expert rows on one accelerator takes
 *   `a + b·rows` ms (nothing when it has no rows).
 * - Network: an all-to-all hop sends `bytes` from each accelerator; the part that stays in
 *   the node crosses NVLink, the rest the inter-node links, both at once; the hop takes
 *   `latency + max(intra ÷ intra bandwidth, inter ÷ inter bandwidth)` for the accelerator
 *   that sends most.
 */
import type { DeviceParams } from "./params.ts";

/** Device ms of one layer execution of `rows` rows. */
export function serviceMs(fixedMs: number, perRowMs: number, rows: number): number {
  return rows > 0 ? fixedMs + perRowMs * rows : 0;
}

/** Network shape: how many accelerators share a node. */
export interface NetworkShape {
  devices: number;
  devicesPerNode: number;
  latencyMs: number;
  intraBytesPerMs: number;
  interBytesPerMs: number;
}

/** The network shape of `devices` accelerators with `params`. */
export function networkShape(devices: number, params: DeviceParams): NetworkShape {
  return {
    devices,
    devicesPerNode: params.devicesPerNode.value,
    latencyMs: params.linkLatencyMs.value,
    intraBytesPerMs: params.intraNodeBytesPerMs.value,
    interBytesPerMs: params.interNodeBytesPerMs.value,
  };
}

/**
 * Ms of one all-to-all hop where the busiest accelerator sends `maxBytes`, spread evenly
 * over its peers; 0 with one accelerator or nothing to send.
 */
export function hopMs(shape: NetworkShape, maxBytes: number): number {
  const { devices } = shape;
  if (devices <= 1 || maxBytes <= 0) return 0;
  const perNode = Math.min(shape.devicesPerNode, devices);
  const intra = (maxBytes * (perNode - 1)) / devices;
  const inter = (maxBytes * (devices - perNode)) / devices;
  return shape.latencyMs + Math.max(intra / shape.intraBytesPerMs, inter / shape.interBytesPerMs);
}

/** M/D/1 mean wait in queue (ms) for arrivals `lambdaPerMs` and service `serviceMs`. */
export function md1MeanWaitMs(lambdaPerMs: number, serviceMs: number): number {
  const rho = lambdaPerMs * serviceMs;
  if (!(rho < 1)) return Infinity;
  return (rho * serviceMs) / (2 * (1 - rho));
}
