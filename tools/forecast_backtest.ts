// deno-lint-ignore-file no-console
/**
 * @module `deno task forecast:backtest [--series <key>]… [--days N] [--synthetic]
 * [--origins N] [--stride N] [--config <file>]`: rolling-origin forecast accuracy (MASE
 * against last value, MAPE) of every forecaster at horizons of 10, 30 and 60 buckets.
 *
 * - `--synthetic`: a generated trace (`tools/traffic/synthetic_trace.ts`): N days
 *   (default 3) of 1-minute buckets, diurnal rate with Poisson-like noise and a 5× event
 *   on the last day at 20:00–21:00 that shifts the mix towards `code`. Reported with the
 *   event known (as a scheduled event would be) and unknown.
 * - otherwise: the stored series in Deno KV at `state.kv` (default every
 *   `requests:<model>` and `tokens:<model>`), the last N days (default: retention), with
 *   the stored scheduled events applied.
 *
 * Origins: by default 24, one every 60 buckets, so the last day is covered (the event
 * included).
 */
import { loadConfig } from "../shared/config_file.ts";
import { EventStore } from "../router/control/events/event_store.ts";
import { eventMultiplier, type ScheduledEvent } from "../router/control/events/scheduled_event.ts";
import { accuracy, backtest, type ModelBacktest } from "../router/control/forecast/backtest.ts";
import { FORECASTERS } from "../router/control/forecast/forecasters.ts";
import { syntheticTrace } from "./traffic/synthetic_trace.ts";
import { formatSeriesKey, parseSeriesKey } from "../router/control/traffic/series_key.ts";
import { TrafficStore } from "../router/control/traffic/traffic_store.ts";
import { parseCli } from "./cli/cli_args.ts";

const HORIZONS = [10, 30, 60];

/** One series to evaluate. */
interface Case {
  title: string;
  history: number[];
  seasonLength: number;
  bucketMs: number;
  factors?: number[];
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : " ".repeat(width - text.length) + text;
}

/** Prints the accuracy table of one case. */
function report(c: Case, options: { origins: number; stride: number }): void {
  const horizon = Math.max(...HORIZONS);
  const start = performance.now();
  const results = backtest(FORECASTERS, c.history, {
    horizon,
    seasonLength: c.seasonLength,
    origins: options.origins,
    stride: options.stride,
    ...(c.factors ? { factors: c.factors } : {}),
  });
  const ms = performance.now() - start;
  const origins = results[0]?.errors.length ?? 0;
  console.log(
    `\n${c.title}: ${c.history.length} buckets of ${
      c.bucketMs / 60_000
    } min, season ${c.seasonLength}, ` +
      `${origins} origins, backtest ${ms.toFixed(0)} ms`,
  );
  if (results.length === 0) {
    console.log("  (history too short for any origin)");
    return;
  }
  const unit = c.bucketMs === 60_000 ? "min" : "buckets";
  console.log(
    "  " + "model".padEnd(16) +
      HORIZONS.map((h) => pad(`h=${h} ${unit} MASE`, 18) + pad("MAPE", 8)).join(""),
  );
  const best = HORIZONS.map((h) =>
    results.reduce((a: ModelBacktest, b) => accuracy(b, h).mase < accuracy(a, h).mase ? b : a)
  );
  for (const result of results) {
    const cells = HORIZONS.map((h, i) => {
      const { mase, mape } = accuracy(result, h);
      const mark = best[i] === result ? "*" : " ";
      return pad(`${mase.toFixed(3)}${mark}`, 18) +
        pad(mape === null ? "-" : `${mape.toFixed(1)}%`, 8);
    });
    console.log("  " + result.name.padEnd(16) + cells.join(""));
  }
  console.log("  * selected (lowest MASE) at that horizon");
}

async function storedCases(days: number | undefined, series: string[]): Promise<Case[]> {
  const config = await loadConfig(Deno.args, Deno.env.toObject());
  const kv = await Deno.openKv(config.state.kv);
  try {
    const clock = { now: () => Date.now() };
    const traffic = new TrafficStore(kv, {
      clock,
      bucketMs: config.traffic.bucket,
      retentionMs: config.traffic.retention,
    });
    const events = await new EventStore(kv).list();
    const keys = series.length > 0
      ? series.map(parseSeriesKey)
      : (await traffic.listSeries()).filter((k) =>
        k.kind !== "expert" && k.requestType === undefined
      );
    const now = traffic.bucketStart(clock.now());
    const cases: Case[] = [];
    for (const key of keys) {
      const index = await traffic.index(key.model);
      if (index === null) {
        console.log(`${formatSeriesKey(key)}: no such series`);
        continue;
      }
      const from = Math.max(
        index.firstBucket,
        days === undefined ? -Infinity : now - days * 86_400_000,
      );
      const history = await traffic.values(key, from, now);
      const start = now - history.length * traffic.bucketMs;
      const model = key.model;
      const factors = factorsFor(events, model, start, traffic.bucketMs, history.length + 60);
      cases.push({
        title: formatSeriesKey(key),
        history,
        seasonLength: Math.max(1, Math.round(86_400_000 / traffic.bucketMs)),
        bucketMs: traffic.bucketMs,
        factors,
      });
    }
    return cases;
  } finally {
    kv.close();
  }
}

function factorsFor(
  events: ScheduledEvent[],
  model: string,
  start: number,
  bucketMs: number,
  count: number,
): number[] {
  return Array.from(
    { length: count },
    (_, i) => eventMultiplier(events, start + i * bucketMs + bucketMs / 2, model),
  );
}

function syntheticCases(days: number): Case[] {
  const trace = syntheticTrace({ days });
  const history = trace.buckets.map((b) => b.requests);
  const events: ScheduledEvent[] = trace.events.map((e, i) => ({
    id: `synthetic-${i}`,
    name: `synthetic ${e.multiplier}x`,
    startMs: e.startMs,
    endMs: e.endMs,
    multiplier: e.multiplier,
    leadTimeMs: 3_600_000,
    createdAt: trace.startMs,
  }));
  const base = { history, seasonLength: trace.seasonLength, bucketMs: trace.bucketMs };
  return [
    {
      ...base,
      title: `synthetic requests, ${days} days, 5x event known`,
      factors: factorsFor(events, "synthetic", trace.startMs, trace.bucketMs, history.length + 60),
    },
    { ...base, title: `synthetic requests, ${days} days, event unknown` },
  ];
}

if (import.meta.main) {
  const { values } = parseCli({
    name: "deno task forecast:backtest",
    summary:
      "Rolling-origin forecast accuracy (MASE against last value, MAPE) of every forecaster\n" +
      "at horizons of 10, 30 and 60 buckets, on the traffic series stored in state.kv or on a\n" +
      "generated trace.",
    options: {
      series: {
        type: "string",
        multiple: true,
        value: "<key>",
        description: "a stored series to evaluate (repeatable; default all)",
      },
      days: { type: "string", value: "<n>", description: "days of history (synthetic: default 3)" },
      synthetic: {
        type: "boolean",
        description: "a generated trace with a 5x event instead of stored series",
      },
      origins: { type: "string", default: "24", value: "<n>", description: "forecast origins" },
      stride: {
        type: "string",
        default: "60",
        value: "<n>",
        description: "buckets between origins",
      },
      config: {
        type: "string",
        value: "<file>",
        description: "config file whose state.kv holds the series (or SWITCHYARD_CONFIG)",
      },
    },
  });
  const days = values.days === undefined ? undefined : Number(values.days);
  const origins = Number(values.origins);
  const stride = Number(values.stride);
  for (const [name, value] of [["days", days], ["origins", origins], ["stride", stride]] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) {
      console.error(`Cannot run the backtest: --${name} must be an integer >= 1`);
      Deno.exit(2);
    }
  }
  const cases = values.synthetic
    ? syntheticCases(days ?? 3)
    : await storedCases(days, values.series ?? []);
  for (const c of cases) report(c, { origins, stride });
}
