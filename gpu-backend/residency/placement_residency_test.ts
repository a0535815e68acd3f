/**
 * Expert residency through the placement state with the simulated executor: cold
 * experts load on first use and are counted, LRU eviction at the budget, pinning by the
 * current and staged plans, busy experts never evicted, warm-ups within the budget.
 */
import assert from "node:assert/strict";
import { silentLogger } from "../../shared/logger.ts";
import { ModelManifestSchema, type ModelPart } from "../../shared/model_manifest.ts";
import type { PlacementPlan } from "../../shared/placement_plan.ts";
import { SimulatedExecutor } from "../execution/simulated_executor.ts";
import { PlacementState } from "../placement/placement_state.ts";
import { ExpertResidency } from "./expert_residency.ts";

const manifest = ModelManifestSchema.parse({
  name: "m",
  d_model: 4,
  d_ff: 8,
  layers: 1,
  experts: 6,
  top_k: 2,
});
const EXPERT_BYTES = 10;

function expert(e: number): ModelPart {
  return { kind: "expert", layer: 0, expert: e };
}

/** A backend "b1" whose experts all start cold; the budget holds `fit` experts. */
function setup(fit: number | null) {
  const executor = new SimulatedExecutor({
    manifest,
    slots: 2,
    fixedMs: 0,
    perRowMs: 0,
    loadFixedMs: 1,
    parts: [],
  });
  const residency = new ExpertResidency({
    budgetBytes: fit === null ? null : fit * EXPERT_BYTES,
    bytes: () => EXPERT_BYTES,
  });
  const placement = new PlacementState({
    manifest,
    backendId: "b1",
    executor,
    logger: silentLogger,
    residency,
  });
  const run = async (e: number, work?: Promise<void>) => {
    const input = new Float32Array([1, 2, 3, 4]);
    return await placement.use(expert(e), async () => {
      await work;
      return (await executor.execute(expert(e), input, 1)).output;
    });
  };
  const warm = () =>
    Array.from({ length: manifest.experts }, (_, e) => e).filter((e) =>
      executor.isLoaded(expert(e))
    );
  return { executor, residency, placement, run, warm };
}

/** A plan over six one-slot backends b1..b6 where b1 hosts expert `onB1`. */
function plan(version: number, onB1: number): PlacementPlan {
  const others = [0, 1, 2, 3, 4, 5].filter((e) => e !== onB1);
  return {
    model: "m",
    version,
    createdAt: 0,
    reason: "test",
    backends: ["b1", "b2", "b3", "b4", "b5", "b6", "b7"].map((id, i) => ({
      id,
      url: `http://127.0.0.1:${i + 1}`,
    })),
    slotsPerBackend: 1,
    layers: [{ phy2log: [onB1, ...others, onB1] }],
  };
}

Deno.test("a cold expert is loaded on first use, answers correctly and counts one cold start", async () => {
  const { executor, placement, run, warm } = setup(null);
  try {
    assert.deepEqual(warm(), []);
    // Three concurrent requests share one load: one cold start.
    const outputs = await Promise.all([run(2), run(2), run(2)]);
    const scale = 0.01 * (1 + 2 / 6);
    for (const output of outputs) {
      assert.deepEqual([...output], [1, 2, 3, 4].map((v) => Math.fround(v * scale)));
    }
    assert.deepEqual(warm(), [2]);
    await run(2);
    assert.equal(placement.coldStarts, 1);
    const stats = placement.coldStartsOf("L0/E2")!;
    assert.equal(stats.count, 1);
    assert.ok(stats.msSum > 0, "the cold start took measurable time");
    assert.equal(stats.msMax, stats.msSum);
    assert.deepEqual(Object.keys(placement.coldStartReport()), ["L0/E2"]);
  } finally {
    await executor.close();
  }
});

Deno.test("at the budget the least recently used expert is evicted", async () => {
  const { executor, residency, placement, run, warm } = setup(2);
  try {
    await run(0);
    await run(1);
    await run(0); // E1 is now the least recently used
    await run(2);
    assert.deepEqual(warm(), [0, 2]);
    assert.equal(residency.usedBytes, 2 * EXPERT_BYTES);
    await run(1); // cold again: evicts E0
    assert.deepEqual(warm(), [1, 2]);
    assert.equal(placement.coldStarts, 4);
    assert.equal(placement.coldStartsOf("L0/E1")!.count, 2);
    const report = placement.residencyReport();
    assert.equal(report.budget_bytes, 20);
    assert.equal(report.used_bytes, 20);
    assert.deepEqual(report.warm.map((w) => w.part), ["L0/E2", "L0/E1"]);
  } finally {
    await executor.close();
  }
});

Deno.test("experts hosted here by the current or staged plan are never evicted", async () => {
  const { executor, placement, run, warm } = setup(2);
  try {
    await placement.stage(plan(1, 0));
    placement.activate(1);
    await run(1);
    await run(2);
    await run(3);
    // E0 is the least recently used but pinned by the active plan.
    assert.deepEqual(warm(), [0, 3]);
    // Staging a plan that hosts E5 pins it too: the budget is exceeded rather than
    // evicting a pinned expert; E3 (unpinned) goes.
    await placement.stage(plan(2, 5));
    assert.deepEqual(warm(), [0, 5]);
    // The pinned experts fill the budget: E4 is served, then evicted once idle.
    await run(4);
    assert.deepEqual(warm(), [0, 5]);
    assert.equal(placement.coldStartsOf("L0/E4")!.count, 1);
    const pinned = placement.residencyReport().warm.filter((w) => w.pinned).map((w) => w.part);
    assert.deepEqual(pinned.sort(), ["L0/E0", "L0/E5"]);
    // Activating plan 2 unpins E0: it stays warm, but is the first to go for room.
    placement.activate(2);
    assert.deepEqual(placement.residencyReport().warm.filter((w) => w.pinned).map((w) => w.part), [
      "L0/E5",
    ]);
    await run(4);
    assert.deepEqual(warm(), [4, 5]);
  } finally {
    await executor.close();
  }
});

Deno.test("an expert with queued or running work is never evicted; it goes once idle", async () => {
  const { executor, residency, placement, run, warm } = setup(1);
  try {
    await run(0);
    let finish0!: () => void;
    let finish1!: () => void;
    const running0 = run(0, new Promise<void>((resolve) => finish0 = resolve));
    const running1 = run(1, new Promise<void>((resolve) => finish1 = resolve));
    // E1 needs E0's room, but E0 is busy: E1 loads over the budget.
    await placement.ensureLoaded(expert(1));
    assert.deepEqual(warm(), [0, 1]);
    assert.ok(residency.overBudget);
    finish0();
    await running0;
    // E0 drained: evicted (E1 is still busy), and the budget holds again.
    assert.deepEqual(warm(), [1]);
    assert.ok(!residency.overBudget);
    finish1();
    await running1;
    assert.deepEqual(warm(), [1]);
  } finally {
    await executor.close();
  }
});

Deno.test("warm() loads in priority order within the budget and skips the rest", async () => {
  const { executor, placement, run, warm } = setup(2);
  try {
    await run(0);
    await run(1);
    const result = await placement.warm([expert(3), expert(1), expert(4), {
      kind: "gate",
      layer: 0,
    }]);
    assert.deepEqual(result, {
      warmed: ["L0/E3"],
      already_warm: ["L0/gate", "L0/E1"],
      evicted: ["L0/E0"],
      skipped: ["L0/E4"],
    });
    assert.deepEqual(warm(), [1, 3]);
    // Warm-ups are not cold starts; the warmed experts now serve without one.
    await run(3);
    assert.equal(placement.coldStarts, 2);
    // The most wanted (E3) is the most recently used: E1 goes first.
    await run(5);
    assert.deepEqual(warm(), [3, 5]);
  } finally {
    await executor.close();
  }
});

Deno.test("release() under a budget leaves unplaced experts warm; without one it unloads them", async () => {
  for (const [fit, expected] of [[3, [0, 1]], [null, [1]]] as const) {
    const { executor, placement, warm } = setup(fit);
    try {
      await placement.stage(plan(1, 0));
      placement.activate(1);
      await placement.stage(plan(2, 1));
      placement.activate(2);
      await placement.release(2);
      assert.deepEqual(warm(), expected, `budget ${fit}`);
    } finally {
      await executor.close();
    }
  }
});
