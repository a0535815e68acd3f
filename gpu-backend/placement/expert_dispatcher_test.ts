import assert from "node:assert/strict";
import type { BatchObserver } from "../batching/batch_queues.ts";
import { ApiError } from "../../shared/errors.ts";
import { silentLogger } from "../../shared/logger.ts";
import { ModelManifestSchema, type ModelPart } from "../../shared/model_manifest.ts";
import type { PlacementPlan } from "../../shared/placement_plan.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "../execution/executor.ts";
import { type PeerClient, PeerUnavailableError } from "../peer/peer_client.ts";
import { ExpertDispatcher } from "./expert_dispatcher.ts";
import { PlacementState } from "./placement_state.ts";

const manifest = ModelManifestSchema.parse({
  name: "m",
  d_model: 2,
  d_ff: 4,
  layers: 1,
  experts: 4,
  top_k: 2,
});

class AlwaysLoaded implements ExpertExecutor {
  readonly provider = "fake";
  readonly slots = 1;
  readonly depth = 1;
  execute(_part: ModelPart, input: Float32Array): Promise<Execution> {
    return Promise.resolve({ output: input, ms: 0 });
  }
  stats(): ExecutorStats {
    return { slots: 1, executions: 0, rows: 0, busyMs: 0, queued: 0, running: 0 };
  }
  close() {
    return Promise.resolve();
  }
}

function fakePeer(id: string, behaviour: "ok" | "down" | "dies") {
  const calls: number[] = [];
  const peer = {
    peerId: id,
    available: behaviour !== "down",
    run(_layer: number, expert: number, input: Float32Array, rows: number) {
      calls.push(rows);
      if (behaviour === "dies") {
        peer.available = false;
        return Promise.reject(new PeerUnavailableError(id, "connection closed"));
      }
      return Promise.resolve(input.map((v) => v + 100 * (expert + 1)));
    },
  };
  return { peer: peer as unknown as PeerClient, calls };
}

/** A dispatcher on b1 with peers b2 and b3; `phy2log` spans the three backends. */
async function setup(
  phy2log: number[],
  weights?: number[],
  peerBehaviour: "ok" | "down" | "dies" = "ok",
  onUnreachable: "load_local" | "fail" = "fail",
  b3Behaviour: "ok" | "down" | "dies" = "ok",
) {
  const placement = new PlacementState({
    manifest,
    backendId: "b1",
    executor: new AlwaysLoaded(),
    logger: silentLogger,
  });
  const plan: PlacementPlan = {
    model: "m",
    version: 1,
    createdAt: 0,
    reason: "test",
    backends: ["b1", "b2", "b3"].map((id, i) => ({ id, url: `http://127.0.0.1:${i + 1}` })),
    slotsPerBackend: phy2log.length / 3,
    layers: [{ phy2log, ...(weights ? { replicaWeights: weights } : {}) }],
  };
  const localCalls: number[] = [];
  const local = {
    run(part: ModelPart, input: Float32Array, rows: number, onBatch?: BatchObserver) {
      localCalls.push(rows);
      onBatch?.({ groups: 3, queueMs: 0, batchMs: 0, execMs: 1, runMs: 1 });
      return Promise.resolve(input.map((v) => v + (part.kind === "expert" ? part.expert + 1 : 0)));
    },
  };
  const remote = fakePeer("b2", peerBehaviour);
  const third = fakePeer("b3", b3Behaviour);
  const dispatcher = new ExpertDispatcher({
    selfId: "b1",
    local,
    placement,
    peer: (id) => (id === "b2" ? remote.peer : id === "b3" ? third.peer : undefined),
    onUnreachable,
  });
  await placement.stage(plan);
  placement.activate(1);
  return { dispatcher, localCalls, remote, third, placement };
}

const expert = (e: number): ModelPart => ({ kind: "expert", layer: 0, expert: e });

Deno.test("ExpertDispatcher sends experts hosted elsewhere to the peer and keeps local ones", async () => {
  // b1 hosts experts 0,1; b2 hosts 2,3; b3 hosts 0,1.
  const { dispatcher, localCalls, remote } = await setup([0, 1, 2, 3, 0, 1]);
  assert.deepEqual([...(await dispatcher.run(expert(0), Float32Array.of(1, 2), 1))], [2, 3]);
  assert.deepEqual([...(await dispatcher.run(expert(3), Float32Array.of(1, 2), 1))], [401, 402]);
  assert.deepEqual(localCalls, [1]);
  assert.deepEqual(remote.calls, [1]);
  // Gates and shared experts never leave the backend.
  await dispatcher.run({ kind: "gate", layer: 0 }, Float32Array.of(0, 0), 1);
  assert.equal(localCalls.length, 2);
});

Deno.test("ExpertDispatcher prefers a local replica and spreads remote ones by weight", async () => {
  // Expert 0 on b1 and b2: always local. Expert 3 on b2 (weight 3) and b3 (weight 1).
  const { dispatcher, localCalls, remote, third } = await setup(
    [0, 1, 0, 3, 3, 2],
    [1, 1, 1, 3, 1, 1],
  );
  for (let i = 0; i < 20; i++) await dispatcher.run(expert(0), Float32Array.of(0, 0), 1);
  assert.equal(localCalls.length, 20);
  assert.equal(remote.calls.length, 0);
  for (let i = 0; i < 40; i++) await dispatcher.run(expert(3), Float32Array.of(0, 0), 1);
  assert.equal(remote.calls.length, 30);
  assert.equal(third.calls.length, 10);
});

Deno.test("ExpertDispatcher re-sends rows to another replica when a peer dies", async () => {
  // Expert 3 on b2 (dies on first use) and b3.
  const { dispatcher, remote, third } = await setup([0, 1, 3, 2, 3, 1], undefined, "dies");
  for (let i = 0; i < 4; i++) {
    const out = await dispatcher.run(expert(3), Float32Array.of(1, 1), 1);
    assert.deepEqual([...out], [401, 401]);
  }
  assert.equal(remote.calls.length, 1, "the dead peer is not tried again");
  assert.equal(third.calls.length, 4);
  assert.equal(dispatcher.counters.retries, 1);
});

Deno.test("ExpertDispatcher answers 503 naming the expert when no replica is reachable", async () => {
  const { dispatcher } = await setup([0, 1, 2, 3, 0, 1], undefined, "down");
  await assert.rejects(dispatcher.run(expert(2), Float32Array.of(1, 1), 1), (error) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 503);
    assert.match(error.message, /expert L0\/E2 has no reachable replica/);
    return true;
  });
  // Experts with a local replica still work.
  assert.deepEqual([...(await dispatcher.run(expert(1), Float32Array.of(0, 0), 1))], [2, 2]);
});

Deno.test("ExpertDispatcher runs an unreachable expert locally under load_local", async () => {
  const { dispatcher, localCalls } = await setup(
    [0, 1, 2, 3, 0, 1],
    undefined,
    "down",
    "load_local",
  );
  assert.deepEqual([...(await dispatcher.run(expert(2), Float32Array.of(1, 1), 1))], [4, 4]);
  assert.equal(localCalls.length, 1);
  assert.equal(dispatcher.counters.fallbackRows, 1);
});

Deno.test("live replica weights shift remote rows between replicas", async () => {
  // Expert 3 on b2 and b3, equal weights: an even split.
  const { dispatcher, remote, third, placement } = await setup([0, 1, 3, 2, 3, 1]);
  for (let i = 0; i < 8; i++) await dispatcher.run(expert(3), Float32Array.of(0, 0), 1);
  assert.equal(remote.calls.length, 4);
  assert.equal(third.calls.length, 4);
  // The router reports b2 busy (weight 0.2) and b3 idle (weight 0.8): a 1:4 split.
  placement.setWeights(1, [[1, 1, 0.2, 0.2, 0.8, 0.8]]);
  for (let i = 0; i < 20; i++) await dispatcher.run(expert(3), Float32Array.of(0, 0), 1);
  assert.equal(remote.calls.length, 4 + 4);
  assert.equal(third.calls.length, 4 + 16);
  // Weights for another version or of the wrong shape are refused.
  assert.throws(() => placement.setWeights(2, [[1, 1, 1, 1, 1, 1]]), /active is 1/);
  assert.throws(() => placement.setWeights(1, [[1, 1]]), /expected 1 layers × 6 slots/);
});

Deno.test("ExpertDispatcher passes the batch observer to local runs only", async () => {
  // b1 hosts experts 0,1; b2 hosts 2,3.
  const { dispatcher } = await setup([0, 1, 2, 3, 0, 1]);
  const heard: string[] = [];
  await dispatcher.run(expert(0), Float32Array.of(1, 2), 1, (b) => heard.push(`E0:${b.groups}`));
  await dispatcher.run(expert(3), Float32Array.of(1, 2), 1, (b) => heard.push(`E3:${b.groups}`));
  assert.deepEqual(heard, ["E0:3"]);
});
