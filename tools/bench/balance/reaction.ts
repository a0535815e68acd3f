/**
 * @module `bench:balance --phase reaction`: how long the balancer takes from a skew step
 * to the new plan being active and the measured balance recovered. One pool per
 * `adjust_interval`:
 *   Step 1: balanced traffic (request types uniform) until the plan settles.
 *   Step 2: read the plan in force and pick the step ({@linkcode chooseStep}): the request
 *           type whose experts that plan spreads worst over the backends.
 *   Step 3: at time T every request is of that type; poll every 250 ms the measured
 *           per-layer backend balancedness (`/api/load?detail=replicas`) and the
 *           balancer's decisions until the measured balance has recovered after a switch
 *           (or `adjust_interval` + 40 s); reduce with {@linkcode reactionTimeline}.
 * Measures only; the caller prints and writes.
 */
import type { DemoTraffic } from "../../model/traffic.ts";
import { startPool } from "../../pool/processes.ts";
import { openLoop } from "../load_generator.ts";
import { prepareWorkload } from "../workload.ts";
import { chooseStep, measuredLayerBalance, type StepChoice } from "./step_choice.ts";
import {
  type BalanceSample,
  type ReactionTimeline,
  reactionTimeline,
  RECOVERY_POLLS,
  type TimelineDecision,
} from "./reaction_timeline.ts";

/** Settings of one reaction measurement. */
export interface ReactionSettings {
  modelDir: string;
  dModel: number;
  modelName: string;
  traffic: DemoTraffic | undefined;
  backends: number;
  adjustInterval: string;
  threshold: number;
  rate: number;
  settleS: number;
  /** Extra env (executor settings). */
  env: Record<string, string>;
}

/** What one measurement saw. */
export interface ReactionResult extends ReactionTimeline {
  adjustInterval: string;
  /** Switches (rebalance) during the balanced settle phase. */
  settleSwitches: number;
  /** Measured worst layer just before the step. */
  measuredBefore: number | null;
  step: StepChoice | null;
  stepType: string;
}

const POLL_MS = 250;

async function getJson(url: string) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
  return await response.json();
}

async function measuredWorst(url: string): Promise<number | null> {
  const body = await getJson(`${url}/api/load?detail=replicas`);
  const perLayer = measuredLayerBalance(body.backends ?? []);
  return perLayer === null ? null : Math.min(...perLayer);
}

/** Runs one pool through a skew step; see the module doc. */
export async function measureReaction(settings: ReactionSettings): Promise<ReactionResult> {
  const types = settings.traffic?.request_types ?? ["default"];
  const balanced = prepareWorkload({ dModel: settings.dModel, traffic: settings.traffic, zipf: 0 });
  const pool = await startPool({
    modelDir: settings.modelDir,
    backends: settings.backends,
    env: {
      SWITCHYARD_STATE__KV: ":memory:",
      SWITCHYARD_LOG__REQUESTS: "false",
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "dynamic",
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: settings.adjustInterval,
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: String(settings.threshold),
      ...settings.env,
    },
  });
  const url = pool.router.url;
  const path = `${url}/v2/models/${settings.modelName}/infer`;
  const decisions = new Map<string, TimelineDecision>();
  const collect = async () => {
    for (const d of (await getJson(`${url}/api/plan`)).decisions ?? []) {
      decisions.set(`${d.at}/${d.action}/${d.outcome}`, d);
    }
  };
  try {
    // Step 1: a plan, then balanced traffic until the plan settles.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if ((await getJson(`${url}/api/plan`)).version >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const settleStart = Date.now();
    const settleStop = new AbortController();
    const settle = openLoop({
      url: path,
      requests: balanced,
      rate: settings.rate,
      durationS: settings.settleS + 60,
      signal: settleStop.signal,
    });
    while (Date.now() < settleStart + settings.settleS * 1000) {
      await collect();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    // Step 2: the step that unbalances the plan in force (balanced traffic still flowing).
    const plan = await getJson(`${url}/api/plan`);
    const step = chooseStep(plan.layers ?? [], types, settings.traffic?.preferred_experts ?? []);
    const stepType = step?.type ?? types[0]!;
    const skewed = prepareWorkload({
      dModel: settings.dModel,
      traffic: settings.traffic,
      typeOrder: [stepType],
      seed: 2,
    });
    const measuredBefore = await measuredWorst(url);
    await collect();
    const settleSwitches = [...decisions.values()].filter((d) =>
      d.at >= settleStart && d.action === "rebalance" && d.outcome === "switched"
    ).length;
    // Step 3: the step; poll until recovered after a switch, or the wait is over.
    settleStop.abort();
    await settle;
    const t0 = Date.now();
    const stop = new AbortController();
    const adjustMs = parseSeconds(settings.adjustInterval) * 1000;
    const waitMs = adjustMs + 40_000;
    const traffic = openLoop({
      url: path,
      requests: skewed,
      rate: settings.rate,
      durationS: waitMs / 1000 + 30,
      signal: stop.signal,
    });
    const samples: BalanceSample[] = [];
    let timeline = reactionTimeline(t0, samples, [], settings.threshold);
    while (Date.now() < t0 + waitMs + (timeline.switchS === null ? 0 : 20_000)) {
      await new Promise((resolve) =>
        setTimeout(resolve, POLL_MS)
      );
      samples.push({ t: Date.now() - t0, worst: await measuredWorst(url) });
      await collect();
      timeline = reactionTimeline(t0, samples, [...decisions.values()], settings.threshold);
      if (timeline.recoveredS !== null) break;
    }
    stop.abort();
    await traffic;
    await Deno.mkdir("out", { recursive: true });
    await Deno.writeTextFile(
      `out/bench-balance-reaction-${settings.adjustInterval}-${t0}.json`,
      JSON.stringify({ t0, stepType, step, samples, decisions: [...decisions.values()] }, null, 1),
    );
    return {
      ...timeline,
      adjustInterval: settings.adjustInterval,
      settleSwitches,
      measuredBefore,
      step,
      stepType,
    };
  } finally {
    await pool.close();
  }
}

export { RECOVERY_POLLS };

function parseSeconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  if (!match) throw new RangeError(`Cannot read duration "${text}" (e.g. 10s)`);
  const value = Number(match[1]);
  return match[2] === "ms" ? value / 1000 : match[2] === "m" ? value * 60 : value;
}
