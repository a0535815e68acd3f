/**
 * @module The "Reading it" notes of `summary.md`, pure: what each executor can and cannot
 * show on this machine, and — from the run's own figures — whether the simulated devices
 * or the shared host cores were the bottleneck at saturation.
 */
import type { RunOutcome } from "./outcome.ts";
import type { ExecutorSection } from "./summary.ts";

/** A simulated device busier than this at saturation counts as the bottleneck. */
export const DEVICE_BOUND_BUSY = 0.8;

const mean = (values: readonly number[]) =>
  values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;

/**
 * What any placement could gain at saturation when the busiest device binds: static's
 * busiest ÷ mean device busy (the same device work spread evenly), beside what the
 * others gained; empty without a device-bound static run.
 */
function balanceCeiling(outcomes: readonly RunOutcome[]): string {
  const statics = outcomes.filter((o) => o.config === "static");
  const busiest = mean(statics.map((o) => o.saturationBusyMax));
  if (!(busiest >= DEVICE_BOUND_BUSY)) return "";
  const ceiling = mean(statics.map((o) => o.saturationBusyMax / o.saturationBusyMean));
  const gained = [...new Set(outcomes.map((o) => o.config))]
    .filter((c) => c !== "static")
    .map((c) => {
      const ratios = outcomes.filter((o) => o.config === c).flatMap((o) => {
        const base = statics.find((b) => b.seed === o.seed);
        return base ? [o.saturation.tokensPerS / base.saturation.tokensPerS] : [];
      });
      return `${c} ${mean(ratios).toFixed(2)}×`;
    });
  return ` Under static the busiest device was ${(100 * busiest).toFixed(0)} % busy at ` +
    `saturation and the mean ${
      (100 * mean(statics.map((o) => o.saturationBusyMean))).toFixed(0)
    } %: ` +
    `spreading the same device work evenly could raise saturation throughput by at most ` +
    `~${ceiling.toFixed(2)}× (busiest ÷ mean, the ceiling of any placement; replicas add ` +
    `per-expert work, so it is an upper bound)${
      gained.length > 0 ? `; measured: ${gained.join(", ")}` : ""
    }.`;
}

/** The notes for these sections (and the demo check's outcomes). */
export function readingNotes(
  sections: readonly ExecutorSection[],
  demo: readonly RunOutcome[],
  options: { compression?: number } = {},
): string[] {
  const cores = navigator.hardwareConcurrency;
  const notes: string[] = [];
  for (const section of sections) {
    const saturated = section.outcomes;
    const busiest = mean(saturated.map((o) => o.saturationBusyMax));
    const used = mean(
      saturated.map((o) =>
        o.saturationCores.router + o.saturationCores.backends + o.saturationCores.generator
      ),
    );
    if (section.name === "onnx") {
      notes.push(
        `onnx: every backend's executor, the router and the load generator share this machine's ` +
          `${cores} cores, so a hot backend takes CPU the cold ones leave idle — a hot backend ` +
          "costs less than a hot dedicated device would, and balancing cannot add compute. " +
          "Read this executor for what placement does to hops, batching and queueing on real " +
          `processes; at saturation the processes used ${used.toFixed(2)} of ${cores} cores.`,
      );
    } else {
      const bound = busiest >= DEVICE_BOUND_BUSY
        ? `the busiest simulated device was ${(100 * busiest).toFixed(0)} % busy at saturation ` +
          `(mean over runs): the devices, not the host, bound the pool, as on a GPU pool`
        : `the busiest simulated device was only ${(100 * busiest).toFixed(0)} % busy at ` +
          `saturation (mean over runs) while the processes used ${used.toFixed(2)} of ${cores} ` +
          "cores: this run was HOST-bound (HTTP, gates, batching and peer hops on shared cores), " +
          "so it does not show what placement does on dedicated devices; a longer device time " +
          "(--device-scale, an assumption) or more cores would";
      notes.push(
        "simulated: each backend's layer executions occupy its own simulated device for the " +
          "device time measured from onnxruntime in this run; gates, HTTP, batching and the peer " +
          `channel are real work on the shared cores. In this run ${bound}.` +
          balanceCeiling(saturated),
      );
    }
  }
  for (const section of sections) {
    const eplb = section.outcomes.filter((o) => o.config === "eplb-10min");
    const share = mean(eplb.flatMap((o) => o.switchingShare === null ? [] : [o.switchingShare]));
    if (!Number.isFinite(share)) continue;
    const each = mean(eplb.flatMap((o) => o.replanMs === null ? [] : [o.replanMs / 1000]));
    notes.push(
      `${section.name}: eplb-10min spent ${(100 * share).toFixed(0)} % of the measured time ` +
        `switching plans (${each.toFixed(1)} s per switch: staging on every backend` +
        `${section.name === "onnx" ? ", composing layer graphs on the shared cores" : ""}). ` +
        (options.compression !== undefined
          ? `Switches are not compressed: at ${options.compression.toFixed(0)}× a switch weighs ` +
            `${options.compression.toFixed(0)} times more against the load than in a real hour; `
          : "") +
        "a longer --shift lowers that share.",
    );
  }
  if (demo.length > 0) {
    notes.push(
      "demo check: every expert fits on every backend, so replicate-all needs no hop; the " +
        "default must come within 5 % of the better of full replication and static expert " +
        "parallelism in saturation throughput.",
    );
  }
  notes.push(
    "goodput counts requests answered 200 within the SLO per second (vLLM bench serve's " +
      "definition); attainment is their share of all arrivals, errors and shed arrivals " +
      "included. Latency is measured from each request's scheduled arrival.",
    "ratios are taken per seed (same seed, same requests and arrivals) and then averaged; " +
      "p99 over a ten-second phase rests on a few hundred requests and moves between runs.",
  );
  return notes;
}
