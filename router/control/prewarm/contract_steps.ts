/**
 * @module Two of the capacity controller's tracking steps (`capacity_controller.ts`):
 * staging a contract's placement on the backends ready for it, and activating it at the
 * deadline or when its traffic arrives.
 *
 * - Stage: once every backend the contract needs is ready (active first, then standby), or
 *   none more can arrive in time and the deadline is near (twice the measured expert load
 *   time, 30 s assumed before any, plus a tracking step), the planner's placement of the
 *   contract's load over exactly those backends is saved as a new version and staged on
 *   them (`PlacementPort.stage` → `stagePlan()`); the set changing (a late backend) stages
 *   again. Each new backend's stage time is its expert load time.
 * - Activate: at `readyBy`, or once the pool's tokens/s reach the contract's ramp level, the
 *   staged version is activated by the balancer with the standby backends promoted in the
 *   same turn; without a staged version (or when activating fails) the standby backends are
 *   promoted and the balancer re-plans. Either way the contract counts as activated.
 */
import type { PlanBackend } from "../../../shared/placement_plan.ts";
import type { StageOutcome } from "../balancer/plan_switch.ts";
import { isActive, isDraining, isReady, sameIds } from "./_members.ts";
import { observedTokensPerS } from "./capacity.ts";
import type { ContractState } from "./capacity_contract.ts";
import type { CapacityControllerDeps } from "./capacity_controller.ts";
import type { LeadTime } from "./lead_time.ts";
import type { PoolMember } from "./prewarm_types.ts";

/** What staging reads. */
export interface StageContext {
  deps: Pick<CapacityControllerDeps, "placement" | "logger" | "settings">;
  members: readonly PoolMember[];
  lead: LeadTime;
  /** URLs the controller added (their stage time is an expert load time). */
  added: readonly string[];
  expertLoad(url: string, ms: number): void;
}

/** Stages `c`'s placement when due; see the module doc. */
export async function stageContract(
  c: ContractState,
  now: number,
  ctx: StageContext,
): Promise<"staged" | "waiting" | "failed"> {
  const { deps } = ctx;
  const { placement } = deps;
  const load = c.load;
  if (placement === undefined || load === null) return "waiting";
  const usable = ctx.members.filter((m) => !isDraining(m) && isReady(m));
  const ready = [...usable.filter(isActive), ...usable.filter((m) => !isActive(m))]
    .slice(0, c.target);
  const stageLead = (ctx.lead.expertLoadMs ?? 30_000) * 2 + (deps.settings.track_interval ?? 5000);
  const complete = ready.length >= c.target;
  const noMoreInTime = c.assessment?.status === "at_risk" && now >= c.readyBy - stageLead;
  if (!complete && !noMoreInTime) return "waiting";
  const ids = ready.map((m) => m.name).sort();
  if (c.staged !== null && sameIds(c.staged.backends, ids)) return "staged";
  const backends: PlanBackend[] = ready.map((m) => ({ id: m.name, url: m.url }));
  let outcome: StageOutcome;
  try {
    outcome = await placement.stage(placement.propose(load, backends));
  } catch (error) {
    return failed(ctx, c, error instanceof Error ? error.message : String(error));
  }
  if (outcome.kind === "stage_failed") return failed(ctx, c, outcome.error.message);
  c.staged = { plan: outcome.plan, version: outcome.plan.version, backends: ids, at: now };
  for (const result of outcome.results) {
    const member = ready.find((m) => m.name === result.backend);
    if (member !== undefined && ctx.added.includes(member.url)) {
      ctx.expertLoad(member.url, result.ms);
    }
  }
  deps.logger.info("capacity contract staged", {
    event: "prewarm",
    contract: c.id,
    version: outcome.plan.version,
    backends: ids.length,
    target: c.target,
    loaded: outcome.results.reduce((sum, r) => sum + r.loaded.length, 0),
    stage_ms: Math.max(0, ...outcome.results.map((r) => r.ms)),
  });
  return "staged";
}

function failed(ctx: StageContext, c: ContractState, message: string): "failed" {
  ctx.deps.logger.warn("capacity contract staging failed", {
    event: "prewarm",
    contract: c.id,
    error: message,
  });
  return "failed";
}

/** Activates `c` when due; see the module doc. */
export async function activateContract(
  c: ContractState,
  now: number,
  ctx: {
    deps: Pick<CapacityControllerDeps, "balancer" | "pool" | "poolLoad" | "logger">;
    members: readonly PoolMember[];
  },
): Promise<void> {
  const { deps } = ctx;
  const observed = observedTokensPerS(deps.poolLoad());
  const ramped = c.rampTokensPerS !== null && observed !== null && observed >= c.rampTokensPerS;
  if (now < c.readyBy && !ramped) return;
  const standby = ctx.members.filter((m) => (m.role ?? "active") === "standby");
  const promote = (names: readonly string[] | null) => {
    for (const m of standby) {
      if (names === null || names.includes(m.name)) deps.pool.setRole(m.url, "active");
    }
  };
  let how = "no placement staged: standby backends promoted, the balancer re-plans";
  if (c.staged !== null) {
    const { plan, backends: names } = c.staged;
    try {
      const result = await deps.balancer.activateStaged(plan, {
        trigger: "prewarm",
        beforeClaim: () => promote(names),
      });
      how = `version ${result.version} activated (${result.moved} replicas moved)`;
    } catch (error) {
      how = `activating version ${plan.version} failed (${
        error instanceof Error ? error.message : String(error)
      }): standby backends promoted, the balancer re-plans`;
    }
  }
  promote(null);
  c.activatedAt = now;
  deps.logger.info("capacity contract activated", {
    event: "prewarm",
    contract: c.id,
    why: ramped && now < c.readyBy ? "traffic arrived" : "deadline",
    ready: ctx.members.filter((m) => !isDraining(m) && isReady(m)).length,
    target: c.target,
    how,
  });
}
