import assert from "node:assert/strict";
import { parseCliArgs } from "../cli/cli_args.ts";
import { TRAFFIC_OPTIONS, trafficSettings } from "./traffic_args.ts";

const SPEC = { name: "deno task traffic", summary: "", options: TRAFFIC_OPTIONS };

function settings(args: string[]) {
  const parsed = parseCliArgs(SPEC, args);
  if (parsed.kind !== "run") throw new Error(parsed.text);
  return trafficSettings(parsed.values);
}

Deno.test("trafficSettings() defaults: 20 req/s for 60 s, steady, 1–8 tokens, binary", () => {
  assert.deepEqual(settings([]), {
    rate: 20,
    durationS: 60,
    mix: "steady",
    tokens: { min: 1, max: 8 },
    binary: true,
    shiftEveryS: undefined,
    maxOutstanding: 256,
    seed: 1,
  });
});

Deno.test("trafficSettings() reads durations, token ranges and formats", () => {
  const s = settings([
    "--duration",
    "2m",
    "--tokens",
    "4",
    "--format",
    "json",
    "--shift-every",
    "30",
  ]);
  assert.equal(s.durationS, 120);
  assert.deepEqual(s.tokens, { min: 4, max: 4 });
  assert.equal(s.binary, false);
  assert.equal(s.shiftEveryS, 30);
});

Deno.test("trafficSettings() names the bad flag", () => {
  const cases: [string[], RegExp][] = [
    [["--rate", "0"], /--rate must be a positive number, got "0"/],
    [["--duration", "soon"], /--duration must be a duration like 30s or 5m, got "soon"/],
    [["--mix", "bursty"], /--mix must be one of steady, skewed, shift, spike, got "bursty"/],
    [["--tokens", "8-2"], /--tokens must be N or MIN-MAX/],
    [["--format", "xml"], /--format must be binary or json/],
    [["--max-outstanding", "1.5"], /--max-outstanding must be a positive integer/],
  ];
  for (const [args, message] of cases) assert.throws(() => settings(args), message);
});
