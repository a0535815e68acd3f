/**
 * @module The command line of `deno task traffic`: option list (for `--help`) and the
 * checks that turn flag strings into a run's settings, each failure naming the flag.
 */
import { DurationSchema } from "../../shared/config.ts";
import type { CliValues } from "../cli/cli_args.ts";
import { ROUTER_OPTIONS } from "../client/router_target.ts";
import { MIX_NAMES, type MixName } from "./mixes.ts";

/** The options of `deno task traffic`. */
export const TRAFFIC_OPTIONS = {
  rate: {
    type: "string",
    default: "20",
    value: "<req/s>",
    description: "mean requests per second (Poisson arrivals)",
  },
  duration: {
    type: "string",
    default: "60s",
    value: "<time>",
    description: "how long to send, e.g. 30s, 5m (a bare number is seconds)",
  },
  mix: {
    type: "string",
    default: "steady",
    value: "<name>",
    description: `scenario: ${MIX_NAMES.join(" | ")}`,
  },
  tokens: {
    type: "string",
    default: "1-8",
    value: "<n|min-max>",
    description: "tokens (rows) per request, fixed or drawn uniformly",
  },
  format: {
    type: "string",
    default: "binary",
    value: "<binary|json>",
    description: "OIP v2 binary tensor extension or plain JSON bodies",
  },
  ...ROUTER_OPTIONS,
  model: {
    type: "string",
    value: "<name>",
    description: "model to call (default: the one in model.dir)",
  },
  "model-dir": {
    type: "string",
    value: "<dir>",
    description: "model directory for shapes and demo tokens (default: model.dir)",
  },
  "shift-every": {
    type: "string",
    value: "<time>",
    description: "shift: rotate the mix this often (default: a quarter of the run)",
  },
  "max-outstanding": {
    type: "string",
    default: "256",
    value: "<n>",
    description: "requests in flight before arrivals are skipped",
  },
  seed: {
    type: "string",
    default: "1",
    value: "<n>",
    description: "random seed (same seed, same requests)",
  },
  json: {
    type: "boolean",
    description: "print the summary as one JSON object (progress goes to stderr)",
  },
} as const;

/** A run's settings from the command line. */
export interface TrafficSettings {
  rate: number;
  durationS: number;
  mix: MixName;
  tokens: { min: number; max: number };
  binary: boolean;
  shiftEveryS: number | undefined;
  maxOutstanding: number;
  seed: number;
}

function seconds(flag: string, text: string): number {
  const parsed = DurationSchema.safeParse(/^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : text);
  if (!parsed.success || parsed.data <= 0) {
    throw new RangeError(
      `Cannot run traffic: --${flag} must be a duration like 30s or 5m, got "${text}"`,
    );
  }
  return parsed.data / 1000;
}

function positive(flag: string, text: string, integer: boolean): number {
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new RangeError(
      `Cannot run traffic: --${flag} must be a positive ${
        integer ? "integer" : "number"
      }, got "${text}"`,
    );
  }
  return value;
}

/** Checks the flags; throws a `RangeError` naming the first bad one. */
export function trafficSettings(values: CliValues<typeof TRAFFIC_OPTIONS>): TrafficSettings {
  if (!(MIX_NAMES as readonly string[]).includes(values.mix)) {
    throw new RangeError(
      `Cannot run traffic: --mix must be one of ${MIX_NAMES.join(", ")}, got "${values.mix}"`,
    );
  }
  if (values.format !== "binary" && values.format !== "json") {
    throw new RangeError(
      `Cannot run traffic: --format must be binary or json, got "${values.format}"`,
    );
  }
  const range = /^(\d+)(?:-(\d+))?$/.exec(values.tokens);
  const min = Number(range?.[1]);
  const max = Number(range?.[2] ?? range?.[1]);
  if (range === null || min < 1 || max < min) {
    throw new RangeError(
      `Cannot run traffic: --tokens must be N or MIN-MAX with 1 <= MIN <= MAX, got "${values.tokens}"`,
    );
  }
  return {
    rate: positive("rate", values.rate, false),
    durationS: seconds("duration", values.duration),
    mix: values.mix as MixName,
    tokens: { min, max },
    binary: values.format === "binary",
    shiftEveryS: values["shift-every"] === undefined
      ? undefined
      : seconds("shift-every", values["shift-every"]),
    maxOutstanding: positive("max-outstanding", values["max-outstanding"], true),
    seed: positive("seed", values.seed, true),
  };
}
