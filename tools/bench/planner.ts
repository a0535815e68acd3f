// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:planner`: Switchyard's placement planner against DeepSeek EPLB's
 * greedy baseline over seeded random skewed inputs, plus the DeepSeek-V3-scale case, plus
 * re-planning after a load shift: full re-plan vs the move-minimising planner.
 *
 *   Step 1: generate inputs per shape family (Zipf, uniform, a few very hot experts).
 *   Step 2: plan each with both planners, timing each, and compare max GPU loads.
 *   Step 3: print one row per family and the DeepSeek-V3 case.
 */
import {
  type EplbPlacement,
  greedyPlacement,
  type PlacementInput,
  type PlacementPolicy,
  planPlacement,
  planStats,
} from "../../router/control/balancer/mod.ts";
import { maxGpuLoad } from "../../router/control/balancer/eplb_planner.ts";
import {
  hostingsAdded,
  planIncrementally,
} from "../../router/control/balancer/incremental_planner.ts";
import { createRandom, type Random } from "../model/prng.ts";
import { formatTable, round } from "./stats.ts";
import { dirname } from "node:path";
import { parseCli } from "../cli/cli_args.ts";

/** A family of skewed load shapes. */
type Family = "zipf" | "uniform" | "hot";

const FAMILIES: readonly Family[] = ["zipf", "uniform", "hot"];
const EXPERTS = [16, 32, 64, 128, 256];
const SLOT_RATIOS = [1.125, 1.25, 1.5];

/** Loads for one layer of `experts` experts in `family`, as integer token counts. */
function layerLoads(family: Family, experts: number, random: Random, exponent: number): number[] {
  const base = 10_000;
  if (family === "uniform") {
    return Array.from({ length: experts }, () => Math.floor(random() * base));
  }
  if (family === "hot") {
    const hot = 1 + Math.floor(random() * 4);
    const loads = Array.from({ length: experts }, () => Math.floor(base * (0.5 + random())));
    for (let i = 0; i < hot; i++) loads[i] = Math.floor(base * (10 + random() * 90));
    return shuffle(loads, random);
  }
  const loads = Array.from(
    { length: experts },
    (_, rank) => Math.round((base * 10 * (0.9 + 0.2 * random())) / (rank + 1) ** exponent),
  );
  return shuffle(loads, random);
}

/** One random input of `family`: shape drawn so that every divisibility rule holds. */
function randomInput(family: Family, random: Random): PlacementInput {
  const experts = pick(EXPERTS, random);
  const slots = experts * pick(SLOT_RATIOS, random);
  const gpus = pick(divisors(slots).filter((d) => d >= 2 && slots / d <= 16 && d <= 64), random);
  const groups = pick(divisors(experts).filter((d) => d <= 16), random);
  const nodes = pick(divisors(gpus).filter((d) => groups % d === 0), random);
  const layers = 1 + Math.floor(random() * 8);
  const exponent = 0.5 + random();
  return {
    weight: Array.from({ length: layers }, () => layerLoads(family, experts, random, exponent)),
    num_replicas: slots,
    num_groups: groups,
    num_nodes: nodes,
    num_gpus: gpus,
  };
}

function timed(fn: () => EplbPlacement): { plan: EplbPlacement; ms: number } {
  const start = performance.now();
  const plan = fn();
  return { plan, ms: performance.now() - start };
}

/** Runs `fn` once to warm up, then `runs` times; the plan and the median time. */
function medianTimed(fn: () => EplbPlacement, runs: number): { plan: EplbPlacement; ms: number } {
  fn();
  const results = Array.from({ length: runs }, () => timed(fn)).sort((a, b) => a.ms - b.ms);
  return results[Math.floor(runs / 2)]!;
}

/** Every line printed, for `--out`. */
const printed: string[] = [];
function say(text = ""): void {
  printed.push(text);
  console.log(text);
}

async function main(): Promise<void> {
  const { values } = parseCli({
    name: "deno task bench:planner",
    summary:
      "Switchyard's placement planner vs DeepSeek EPLB's greedy procedure on seeded random\n" +
      "skewed inputs, plus the DeepSeek-V3-scale case.",
    options: {
      inputs: { type: "string", default: "200", value: "<n>", description: "random inputs" },
      seed: { type: "string", default: "7", value: "<n>", description: "random seed" },
      policy: {
        type: "string",
        default: "auto",
        value: "<auto|hierarchical|global>",
        description: "placement policy of both planners",
      },
      out: {
        type: "string",
        value: "<file.md>",
        description: "also write the report there, with the command",
      },
    },
  });
  const random = createRandom(Number(values.seed));
  const count = Number(values.inputs);
  const policy = values.policy as PlacementPolicy;
  const rows: (string | number)[][] = [];
  const all = { ratios: [] as number[], greedyBal: [] as number[], planBal: [] as number[] };
  const times = { greedy: 0, planner: 0, layers: 0 };
  for (const family of FAMILIES) {
    const ratios: number[] = [];
    const greedyBal: number[] = [];
    const planBal: number[] = [];
    let greedyMs = 0;
    let plannerMs = 0;
    let layers = 0;
    const inputs = Math.round(count / FAMILIES.length);
    for (let i = 0; i < inputs; i++) {
      const input = randomInput(family, random);
      const greedy = timed(() => greedyPlacement(input, { policy }));
      const planned = timed(() => planPlacement(input, { policy }));
      const greedyMax = planStats(greedy.plan).maxGpuLoad;
      const plannedMax = planStats(planned.plan).maxGpuLoad;
      greedyMax.forEach((max, l) => ratios.push(max / plannedMax[l]!));
      greedyBal.push(...greedy.plan.balancedness);
      planBal.push(...planned.plan.balancedness);
      greedyMs += greedy.ms;
      plannerMs += planned.ms;
      layers += input.weight.length;
    }
    rows.push(
      familyRow(family, inputs, ratios, greedyBal, planBal, greedyMs / layers, plannerMs / layers),
    );
    all.ratios.push(...ratios);
    all.greedyBal.push(...greedyBal);
    all.planBal.push(...planBal);
    times.greedy += greedyMs;
    times.planner += plannerMs;
    times.layers += layers;
  }
  rows.push(
    familyRow(
      "all",
      count,
      all.ratios,
      all.greedyBal,
      all.planBal,
      times.greedy / times.layers,
      times.planner / times.layers,
    ),
  );
  say(
    `Placement planner vs DeepSeek EPLB greedy: ${count} inputs, seed ${values.seed}, policy ${policy}; per layer, ratio = greedy max GPU load / planner max GPU load\n`,
  );
  say(
    formatTable(
      [
        "family",
        "inputs",
        "layers",
        "mean ratio",
        "min ratio",
        "max ratio",
        "improved %",
        "bal greedy",
        "bal planner",
        "greedy ms/layer",
        "planner ms/layer",
      ],
      rows,
    ),
  );
  say();
  deepSeekV3(random);
  say();
  movesAfterShift(random);
  if (values.out !== undefined) {
    const command = ["deno task bench:planner", ...Deno.args].join(" ");
    await Deno.mkdir(dirname(values.out), { recursive: true });
    await Deno.writeTextFile(
      values.out,
      [
        "# Placement planner vs DeepSeek EPLB greedy",
        "",
        `Command: \`${command}\``,
        "",
        `Wall-clock times are from this machine (${navigator.hardwareConcurrency} cores, shared ` +
        "with other work while it ran): compare them within this run only.",
        "",
        "```",
        ...printed,
        "```",
        "",
      ].join("\n"),
    );
  }
}

function familyRow(
  family: string,
  inputs: number,
  ratios: number[],
  greedyBal: number[],
  planBal: number[],
  greedyMsPerLayer: number,
  plannerMsPerLayer: number,
): (string | number)[] {
  const improved = ratios.filter((r) => r > 1 + 1e-9).length;
  return [
    family,
    inputs,
    ratios.length,
    round(mean(ratios), 4),
    round(Math.min(...ratios), 4),
    round(Math.max(...ratios), 4),
    round((100 * improved) / ratios.length, 1),
    round(mean(greedyBal), 4),
    round(mean(planBal), 4),
    round(greedyMsPerLayer, 3),
    round(plannerMsPerLayer, 3),
  ];
}

/** DeepSeek-V3 scale: 61 layers × 256 experts, 288 slots on 36 GPUs in 9 nodes, 8 groups. */
function deepSeekV3(random: Random): void {
  const input: PlacementInput = {
    weight: Array.from({ length: 61 }, () => layerLoads("zipf", 256, random, 1.0)),
    num_replicas: 288,
    num_groups: 8,
    num_nodes: 9,
    num_gpus: 36,
  };
  const greedy = medianTimed(() => greedyPlacement(input), 7);
  const planned = medianTimed(() => planPlacement(input), 7);
  const g = planStats(greedy.plan);
  const p = planStats(planned.plan);
  const ratios = g.maxGpuLoad.map((max, l) => max / p.maxGpuLoad[l]!);
  say(
    "DeepSeek-V3 scale (61 layers x 256 experts -> 288 slots, 36 GPUs, 9 nodes, 8 groups; Zipf 1.0; global policy)\n",
  );
  say(
    formatTable(
      [
        "planner",
        "median ms (61 layers)",
        "mean balancedness",
        "min balancedness",
        "mean ratio vs greedy",
      ],
      [
        [
          "greedy (EPLB)",
          round(greedy.ms, 1),
          round(g.meanBalancedness, 4),
          round(g.minBalancedness, 4),
          1,
        ],
        [
          "switchyard",
          round(planned.ms, 1),
          round(p.meanBalancedness, 4),
          round(p.minBalancedness, 4),
          round(mean(ratios), 4),
        ],
      ],
    ),
  );
}

/**
 * Re-planning after the load shifts: the full planner vs the move-minimising one (goal: the
 * full plan's worst layer − 0.01), on Zipf loads whose every expert then moves by ±30 %.
 */
function movesAfterShift(random: Random): void {
  const shapes = [
    { name: "256 x 32 (8 layers, 320 slots)", layers: 8, slots: 320, gpus: 32 },
    { name: "DeepSeek-V3 @144 (58 layers, 288 slots)", layers: 58, slots: 288, gpus: 144 },
  ];
  const rows: (string | number)[][] = [];
  for (const shape of shapes) {
    const base = Array.from({ length: shape.layers }, () => layerLoads("zipf", 256, random, 1.0));
    const shifted = base.map((row) => row.map((w) => w * (0.7 + 0.6 * random())));
    const input = (weight: number[][]): PlacementInput => ({
      weight,
      num_replicas: shape.slots,
      num_groups: 8,
      num_nodes: 1,
      num_gpus: shape.gpus,
    });
    const perGpu = shape.slots / shape.gpus;
    const current = planPlacement(input(base)).phy2log;
    const moved = (after: number[][]) =>
      current.reduce((sum, layer, l) => sum + hostingsAdded(layer, after[l]!, perGpu), 0);
    const full = medianTimed(() => planPlacement(input(shifted)), 3);
    const goal = Math.min(...full.plan.balancedness) - 0.01;
    let incremental = planIncrementally(shifted, current, perGpu, { goal });
    const incrementalMs = medianMs(() => {
      incremental = planIncrementally(shifted, current, perGpu, { goal });
    }, 3);
    const stay = Math.min(
      ...shifted.map((row, l) => {
        const total = row.reduce((a, b) => a + b, 0);
        return total / shape.gpus / maxGpuLoad(row, current[l]!, perGpu);
      }),
    );
    const hosted = shape.slots * shape.layers;
    rows.push(
      [shape.name, "keep", 0, round(stay, 4), 0, 0],
      [
        shape.name,
        "full re-plan",
        round(full.ms, 1),
        round(Math.min(...full.plan.balancedness), 4),
        moved(full.plan.phy2log),
        round((100 * moved(full.plan.phy2log)) / hosted, 1),
      ],
      [
        shape.name,
        "move-minimising",
        round(incrementalMs, 1),
        round(Math.min(...incremental.balancedness), 4),
        incremental.moves,
        round((100 * incremental.moves) / hosted, 1),
      ],
    );
  }
  say(
    "Re-plan after a load shift (Zipf 1.0 plan, then every expert's load x U(0.7, 1.3)); move-minimising goal = full plan's worst layer - 0.01\n",
  );
  say(
    formatTable(
      ["shape", "planner", "median ms", "worst layer", "replicas moved", "% of hosted"],
      rows,
    ),
  );
}

function medianMs(fn: () => void, runs: number): number {
  fn();
  const times = Array.from({ length: runs }, () => {
    const start = performance.now();
    fn();
    return performance.now() - start;
  }).sort((a, b) => a - b);
  return times[Math.floor(runs / 2)]!;
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
}

function pick<T>(values: readonly T[], random: Random): T {
  return values[Math.floor(random() * values.length)]!;
}

function divisors(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
}

function shuffle<T>(values: T[], random: Random): T[] {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values;
}

await main();
