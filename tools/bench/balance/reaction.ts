/**
 * @module `bench:balance --phase reaction`: how long the balancer takes from a skew step
 * to the plan switch. One pool per `adjust_interval`: balanced traffic (request types
 * uniform) until the plan settles, then at time T every request is of one type (the
 * step); the reaction is the first `rebalance` decision with outcome `switched` and
 * `at > T` minus T (same machine clock). Measures only; the caller prints and writes.
 */
import type { DemoTraffic } from "../../model/traffic.ts";
import { startPool } from "../../pool/processes.ts";
import { openLoop } from "../load_generator.ts";
import { prepareWorkload } from "../workload.ts";

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
export interface ReactionResult {
  adjustInterval: string;
  /** Seconds from the step to the switch; null when none within the wait. */
  reactionS: number | null;
  /** Worst-layer balancedness the decision predicted before and after. */
  before: number | null;
  after: number | null;
  reason: string | null;
  /** Switches (rebalance) during the balanced settle phase. */
  settleSwitches: number;
  /** Lowest worst-layer balancedness the balancer saw after the step (null: none seen). */
  worstSeen: number | null;
  stepType: string;
}

interface Decision {
  at: number;
  action: string;
  outcome: string;
  before: number | null;
  after: number | null;
  reason: string;
}

async function decisions(url: string): Promise<Decision[]> {
  const response = await fetch(`${url}/api/plan`);
  const body = await response.json();
  return body.decisions ?? [];
}

/** Runs one pool through a skew step; see the module doc. */
export async function measureReaction(settings: ReactionSettings): Promise<ReactionResult> {
  const types = settings.traffic?.request_types ?? ["default"];
  const stepType = types[0]!;
  const balanced = prepareWorkload({ dModel: settings.dModel, traffic: settings.traffic, zipf: 0 });
  const skewed = prepareWorkload({
    dModel: settings.dModel,
    traffic: settings.traffic,
    typeOrder: [stepType],
    seed: 2,
  });
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
  try {
    // Step 1: a plan, then balanced traffic until the plan settles.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const plan = await (await fetch(`${url}/api/plan`)).json();
      if (plan.version >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const settleStart = Date.now();
    await openLoop({
      url: path,
      requests: balanced,
      rate: settings.rate,
      durationS: settings.settleS,
    });
    const settleSwitches = (await decisions(url)).filter((d) =>
      d.at >= settleStart && d.action === "rebalance" && d.outcome === "switched"
    ).length;
    // Step 2: the step, and wait for the switch (adjust_interval + 40 s at most).
    const step = Date.now();
    const stop = new AbortController();
    const adjustMs = parseSeconds(settings.adjustInterval) * 1000;
    const traffic = openLoop({
      url: path,
      requests: skewed,
      rate: settings.rate,
      durationS: adjustMs / 1000 + 40,
      signal: stop.signal,
    });
    let found: Decision | undefined;
    while (Date.now() < step + adjustMs + 40_000 && found === undefined) {
      await new Promise((resolve) =>
        setTimeout(resolve, 250)
      );
      found = (await decisions(url)).filter((d) =>
        d.at > step && d.action === "rebalance" && d.outcome === "switched"
      ).sort((a, b) =>
        a.at - b.at
      )[0];
    }
    stop.abort();
    await traffic;
    const seen = (await decisions(url)).filter((d) => d.at > step && d.before !== null)
      .map((d) => d.before!);
    return {
      worstSeen: seen.length === 0 ? null : Math.min(...seen),
      adjustInterval: settings.adjustInterval,
      reactionS: found ? (found.at - step) / 1000 : null,
      before: found?.before ?? null,
      after: found?.after ?? null,
      reason: found?.reason ?? null,
      settleSwitches,
      stepType,
    };
  } finally {
    await pool.close();
  }
}

function parseSeconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(text);
  if (!match) throw new RangeError(`Cannot read duration "${text}" (e.g. 10s)`);
  const value = Number(match[1]);
  return match[2] === "ms" ? value / 1000 : match[2] === "m" ? value * 60 : value;
}
