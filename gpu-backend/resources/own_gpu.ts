/**
 * @module Which GPU a backend runs on, as `nvidia-smi -i` names it, so its accelerator
 * reading (and power) is that device's alone rather than the host's total.
 *
 * CUDA numbers the devices a process may see from 0; `CUDA_VISIBLE_DEVICES` (indices or
 * UUIDs, comma-separated) says which physical devices those are. The backend's CUDA
 * device `backend.cuda.device_id` is therefore entry `device_id` of that list, or the
 * physical index `device_id` when the variable is unset. A backend that does not run
 * on CUDA (CPU, simulated) has no device: no reading, never the host's.
 */

/** What decides the device. */
export interface OwnGpuInput {
  /** The execution provider in use (`cuda`, `cpu`, `simulated`, …). */
  provider: string;
  /** `backend.cuda.device_id`. */
  deviceId: number;
  /** `CUDA_VISIBLE_DEVICES` as the process sees it; `undefined` when unset. */
  cudaVisibleDevices: string | undefined;
}

/** The `nvidia-smi -i` selector of the backend's own GPU, or null when it has none. */
export function ownGpu(input: OwnGpuInput): string | null {
  if (input.provider !== "cuda") return null;
  if (input.cudaVisibleDevices === undefined) return String(input.deviceId);
  const visible = input.cudaVisibleDevices.split(",").map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  // CUDA stops at the first invalid entry; an empty list (or "-1") hides every device.
  return visible[input.deviceId] ?? null;
}
