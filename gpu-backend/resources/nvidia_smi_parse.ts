/**
 * @module Parses what `nvidia-smi --query-gpu=uuid,utilization.gpu,memory.used,
 * memory.total,power.draw --format=csv,noheader,nounits` prints — one line per device,
 * e.g. `GPU-5e3c…, 87, 30512, 81559, 312.45` — into one {@linkcode AcceleratorReading}
 * for the devices read. A backend asks for its own device only (`-i <device>`, see
 * {@linkcode nvidiaSmiArgs}), so the reading is that device's; the UUIDs let the router
 * split one device's power among the backends sharing it instead of counting it twice.
 *
 * Robust by refusal: a value the tool could not read (`[N/A]`, `[Not Supported]`,
 * `[Unknown Error]`, anything not a finite number >= 0) makes that field `null` for the
 * whole reading; output that is not the lines asked for (wrong column count, no lines,
 * a line without any number) gives `null`. A reading is never completed with a guess.
 */
import type { AcceleratorReading } from "../../shared/load_report.ts";

/** The `--query-gpu` fields, in the order the parser expects them. */
export const NVIDIA_SMI_QUERY = "uuid,utilization.gpu,memory.used,memory.total,power.draw";

/** The arguments of every device's reading (no `-i`). */
export const NVIDIA_SMI_ARGS: readonly string[] = [
  `--query-gpu=${NVIDIA_SMI_QUERY}`,
  "--format=csv,noheader,nounits",
];

/** The arguments that read `device` only (an index or UUID, as `nvidia-smi -i` takes). */
export function nvidiaSmiArgs(device?: string): string[] {
  return device === undefined ? [...NVIDIA_SMI_ARGS] : ["-i", device, ...NVIDIA_SMI_ARGS];
}

const COLUMNS = 5;
/** A device UUID as nvidia-smi prints it: `GPU-…` (or `MIG-…`), no spaces. */
const UUID = /^(?:GPU|MIG)-[0-9A-Za-z-/]+$/;
const MIB = 1024 * 1024;
const NUMBER = /^\d+(?:\.\d+)?$/;

/** One value: a finite number >= 0, else `null` (`[N/A]` and friends). */
function value(text: string): number | null {
  const trimmed = text.trim();
  return NUMBER.test(trimmed) ? Number(trimmed) : null;
}

/** Sum of `values`, or `null` when any is unknown. */
function sumOrNull(values: readonly (number | null)[]): number | null {
  let sum = 0;
  for (const v of values) {
    if (v === null) return null;
    sum += v;
  }
  return sum;
}

/** All devices' readings together; `null` when `output` is not the expected lines. */
export function parseNvidiaSmi(output: string): AcceleratorReading | null {
  const lines = output.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  if (lines.length === 0) return null;
  const devices: (number | null)[][] = [];
  const uuids: string[] = [];
  for (const line of lines) {
    const fields = line.split(",");
    if (fields.length !== COLUMNS) return null;
    const values = fields.slice(1).map(value);
    // A line with no number at all (a header, an error text with commas) is no device.
    if (values.every((v) => v === null)) return null;
    devices.push(values);
    const uuid = fields[0]!.trim();
    if (UUID.test(uuid)) uuids.push(uuid);
  }
  const column = (i: number) => devices.map((device) => device[i] ?? null);
  const utilisationSum = sumOrNull(column(0));
  const usedMiB = sumOrNull(column(1));
  const totalMiB = sumOrNull(column(2));
  const utilisation = utilisationSum === null
    ? null
    : Math.min(1, utilisationSum / 100 / devices.length);
  return {
    devices: devices.length,
    utilisation,
    memoryUsedBytes: usedMiB === null ? null : usedMiB * MIB,
    memoryTotalBytes: totalMiB === null ? null : totalMiB * MIB,
    powerW: sumOrNull(column(3)),
    // Only when every device named itself: an identity is never guessed either.
    deviceIds: uuids.length === devices.length ? uuids : null,
  };
}
