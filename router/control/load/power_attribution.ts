/**
 * @module Power attributed per GPU: each backend reads its own device (`nvidia-smi -i`),
 * and backends sharing one device report the same device UUIDs and the same
 * device-wide power. Summing those over backends would count the device once per
 * backend, so each backend is attributed its device's power divided by the number of
 * fresh backends reading that device; the sum over backends is then the sum over
 * devices. Equal shares are an assumption (nvidia-smi has no per-process power), the
 * same for every consumer (series, efficiency, `/api/load`).
 *
 * Backends whose reading names no devices (older backends) keep what they reported;
 * stale backends are neither counted nor changed.
 */
import type { AcceleratorReading } from "../../../shared/load_report.ts";

/** The fields attribution reads and sets. */
export interface PoweredBackend {
  stale: boolean;
  accelerator: AcceleratorReading | null | undefined;
  powerW: number | null | undefined;
}

function deviceKey(backend: PoweredBackend): string | null {
  const ids = backend.accelerator?.deviceIds;
  return ids && ids.length > 0 ? [...ids].sort().join("|") : null;
}

/** `backends` with `powerW` split among the fresh backends reading the same devices. */
export function attributePower<T extends PoweredBackend>(backends: readonly T[]): T[] {
  const sharing = new Map<string, number>();
  for (const backend of backends) {
    const key = deviceKey(backend);
    if (key !== null && !backend.stale) sharing.set(key, (sharing.get(key) ?? 0) + 1);
  }
  return backends.map((backend) => {
    const key = deviceKey(backend);
    const count = key === null || backend.stale ? 1 : sharing.get(key)!;
    return typeof backend.powerW === "number" && count > 1
      ? { ...backend, powerW: backend.powerW / count }
      : backend;
  });
}
