/**
 * @module Test fixture: a {@linkcode Balancer} over fake plan backends, an in-memory KV,
 * a manual clock and a memory logger, with the load it sees settable by the test.
 */
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ManualClock } from "./manual_clock.ts";
import { Balancer } from "../../../router/control/balancer/balancer.ts";
import type { BalancerSettings } from "../../../router/control/balancer/balancer_types.ts";
import { FakePlanBackends } from "./fake_plan_backends.ts";
import { PlanClient } from "../../../router/control/balancer/plan_client.ts";
import { PlanAdoption } from "../../../router/control/balancer/plan_adoption.ts";
import { PlanReconciler } from "../../../router/control/balancer/plan_reconciler.ts";
import { PlanStore } from "../../../router/control/balancer/plan_store.ts";
import type { ModelShape } from "../../../router/control/balancer/rebalancer.ts";
import type { PlacementCosts } from "../../../router/control/load/cost_window.ts";

/** The internal token the fixture's backends require. */
export const INTERNAL_TOKEN = "internal-token-0123456789";

/** 2 layers × 8 experts; over 2 backends with redundancy 0.25 that is 5 slots each. */
export const MODEL: ModelShape = { name: "m", layers: 2, experts: 8, groups: 1 };

/** Load under which the static plan is balanced (0.889). */
export const UNIFORM = [Array(8).fill(10), Array(8).fill(10)];

/** Expert 2 is ten times hotter: the static plan scores 0.68. */
export const HOT = [[10, 10, 100, 10, 10, 10, 10, 10], [10, 10, 100, 10, 10, 10, 10, 10]];

/** What a test drives. */
export interface BalancerFixture {
  balancer: Balancer;
  reconciler: PlanReconciler;
  backends: FakePlanBackends;
  store: PlanStore;
  kv: Deno.Kv;
  clock: ManualClock;
  logger: MemoryLogger;
  /** The load `loadSource` returns. */
  load: { current: number[][] | null };
  current(): Promise<PlacementPlan | null>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A balancer over two fake backends; dispose it to stop it and close the KV. */
export async function balancerFixture(
  settings: Partial<BalancerSettings> = {},
  options: {
    backends?: string[];
    decisionsKept?: number;
    budgets?: ReadonlyMap<string, { budgetBytes: number | null; expertBytes: number }>;
    costs?: () => PlacementCosts;
  } = {},
): Promise<BalancerFixture> {
  const kv = await Deno.openKv(":memory:");
  const store = new PlanStore(kv);
  const clock = new ManualClock();
  const logger = new MemoryLogger();
  const backends = new FakePlanBackends(
    options.backends ?? ["127.0.0.1:9001", "127.0.0.1:9002"],
    { internalToken: INTERNAL_TOKEN },
  );
  const load: { current: number[][] | null } = { current: UNIFORM };
  const client = new PlanClient({ fetch: backends.fetch, clock, internalToken: INTERNAL_TOKEN });
  const reconciler = new PlanReconciler({ store, client, clock, logger });
  const balancer = new Balancer({
    store,
    client,
    reconciler,
    adoption: new PlanAdoption({ store, client, logger }),
    logger,
    clock,
    settings: {
      enabled: true,
      strategy: "dynamic",
      threshold: 0.75,
      adjust_interval: 60_000,
      redundancy: 0.25,
      // These tests exercise expert parallelism; full replication has its own.
      placement: "expert_parallel",
      ...settings,
    },
    loadSource: (model) => model === MODEL.name ? load.current : null,
    backends: () => backends.backends(),
    modelShape: () => MODEL,
    ...(options.decisionsKept === undefined ? {} : { decisionsKept: options.decisionsKept }),
    ...(options.budgets === undefined ? {} : { budgets: () => options.budgets! }),
    ...(options.costs === undefined ? {} : { costs: options.costs }),
  });
  return {
    balancer,
    reconciler,
    backends,
    store,
    kv,
    clock,
    logger,
    load,
    current: () => store.current(MODEL.name),
    async [Symbol.asyncDispose]() {
      await balancer.stop();
      kv.close();
    },
  };
}
