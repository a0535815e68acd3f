import assert from "node:assert/strict";
import { resolveConfig } from "../../shared/config.ts";
import { LoadReportSchema } from "../../shared/load_report.ts";
import { ModelManifestSchema, type ModelPart } from "../../shared/model_manifest.ts";
import type { Logger } from "../../shared/logger.ts";
import type { PartBatchStats } from "../batching/micro_batcher.ts";
import { MicroBatcher } from "../batching/micro_batcher.ts";
import { fixedDelayPolicy } from "../batching/policies.ts";
import type { Execution, ExecutorStats, ExpertExecutor } from "../execution/executor.ts";
import { MoeEngine } from "../engine/engine.ts";
import { createBackendApp } from "./app.ts";
import { PlacementState } from "../placement/placement_state.ts";
import { PeerRegistry } from "../peer/peer_registry.ts";
import { buildLoadReport } from "./load_report.ts";

const manifest = ModelManifestSchema.parse({
  name: "tiny",
  d_model: 4,
  d_ff: 8,
  layers: 2,
  experts: 4,
  top_k: 2,
  shared_experts: 1,
});
const TOKEN = "internal-token-0123456789";
const MS_PER_EXECUTION = 1.5;
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** An executor whose gate always prefers the highest expert ids (3, then 2). */
class FakeExecutor implements ExpertExecutor {
  readonly provider = "fake";
  readonly slots = 2;
  readonly depth = 2;
  #executions = 0;
  #rows = 0;

  execute(part: ModelPart, _input: Float32Array, rows: number): Promise<Execution> {
    this.#executions++;
    this.#rows += rows;
    const width = part.kind === "gate" ? manifest.experts : manifest.d_model;
    const output = Float32Array.from({ length: rows * width }, (_, i) => i % width);
    return Promise.resolve({ output, ms: MS_PER_EXECUTION });
  }

  stats(): ExecutorStats {
    return {
      slots: this.slots,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#executions * MS_PER_EXECUTION,
      queued: 0,
      running: 0,
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function partStats(part: string, rows: number, executions: number, queued = 0): PartBatchStats {
  return {
    part,
    formedBatches: [],
    executions,
    groups: executions,
    rows,
    queueDelayMsSum: 0,
    queueDelayMsMax: 0,
    busyWaitMsSum: 0,
    executionMsSum: executions * 2,
    queuedGroups: queued,
    target: 1,
    arrivalPerS: 0,
    service: { fixedMs: 0, perRowMs: 0 },
  };
}

Deno.test("buildLoadReport() maps batcher, executor and engine counters onto the schema", () => {
  const report = buildLoadReport({
    backendId: "backend-1",
    manifest,
    executor: new FakeExecutor(),
    batcher: {
      stats: () => [partStats("L0/gate", 10, 3), partStats("L1/E2", 7, 2, 4)],
    },
    engine: {
      stats: () => ({
        inFlightRequests: 2,
        inFlightRows: 9,
        requests: 5,
        rows: 10,
        rejected: 1,
        failed: 0,
      }),
    },
    startedAt: 1_000,
    now: 6_000,
    memory: { rssBytes: 100, heapUsedBytes: 50 },
  });
  LoadReportSchema.parse(report);
  assert.equal(report.uptimeMs, 5_000);
  assert.equal(report.at, 6_000);
  assert.equal(report.model, "tiny");
  assert.equal(report.executionProvider, "fake");
  assert.deepEqual(
    [report.requests, report.tokens, report.inFlightRequests, report.inFlightRows, report.rejected],
    [5, 10, 2, 9, 1],
  );
  // Every manifest part is listed: 2 layers × (gate + 4 experts + 1 shared).
  assert.equal(report.parts.length, 12);
  const byPart = new Map(report.parts.map((part) => [part.part, part]));
  assert.deepEqual(byPart.get("L0/gate"), {
    part: "L0/gate",
    layer: 0,
    kind: "gate",
    expert: -1,
    tokens: 10,
    executions: 3,
    busyMs: 6,
    queueDepth: 0,
  });
  assert.deepEqual(byPart.get("L1/E2"), {
    part: "L1/E2",
    layer: 1,
    kind: "expert",
    expert: 2,
    tokens: 7,
    executions: 2,
    busyMs: 4,
    queueDepth: 4,
  });
  assert.equal(byPart.get("L1/S0")?.kind, "shared");
  assert.equal(byPart.get("L0/E3")?.tokens, 0);
});

Deno.test("buildLoadReport() lists only the hosted parts when told which", () => {
  const report = buildLoadReport({
    backendId: "backend-1",
    manifest,
    parts: [{ kind: "gate", layer: 0 }, { kind: "expert", layer: 0, expert: 1 }],
    executor: new FakeExecutor(),
    batcher: { stats: () => [partStats("L0/E1", 4, 1), partStats("L1/E3", 2, 1)] },
    engine: {
      stats: () => ({
        inFlightRequests: 0,
        inFlightRows: 0,
        requests: 0,
        rows: 0,
        rejected: 0,
        failed: 0,
      }),
    },
    startedAt: 0,
    now: 0,
    memory: { rssBytes: 0, heapUsedBytes: 0 },
  });
  // A part the batcher ran but the list omits (a replica being drained) still reports.
  assert.deepEqual(report.parts.map((part) => [part.part, part.tokens]), [
    ["L0/gate", 0],
    ["L0/E1", 4],
    ["L1/E3", 2],
  ]);
});

Deno.test("GET /v2/load requires the internal token and serves a valid report", async () => {
  const executor = new FakeExecutor();
  const batcher = new MicroBatcher({ executor, policy: fixedDelayPolicy(16, 0) });
  const engine = new MoeEngine({ manifest, runner: batcher, temperature: 1, maxQueuedRows: 100 });
  const app = createBackendApp({
    config: resolveConfig({ fileText: JSON.stringify({ auth: { internal_token: TOKEN } }) }),
    backendId: "backend-1",
    engine,
    logger: silent,
    readiness: () => ({ ready: true, details: {} }),
    placement: new PlacementState({ manifest, backendId: "backend-1", executor, logger: silent }),
    peers: new PeerRegistry({ selfId: "backend-1", token: TOKEN, logger: silent }),
    loadReport: () =>
      buildLoadReport({
        backendId: "backend-1",
        manifest,
        executor,
        batcher,
        engine,
        startedAt: 0,
        now: 1_000,
        memory: { rssBytes: 1, heapUsedBytes: 1 },
      }),
  });
  await engine.infer(new Float32Array(3 * 4), 3);
  await engine.infer(new Float32Array(2 * 4), 2);

  assert.equal((await app.request("/v2/load")).status, 401);
  const response = await app.request("/v2/load", {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  assert.equal(response.status, 200);
  const report = LoadReportSchema.parse(await response.json());
  assert.equal(report.backend, "backend-1");
  assert.equal(report.requests, 2);
  assert.equal(report.tokens, 5);
  assert.equal(report.slots, 2);
  assert.equal(report.busyMs, executor.stats().executions * MS_PER_EXECUTION);
  for (const layer of [0, 1]) {
    const parts = report.parts.filter((part) => part.layer === layer);
    const tokens = (kind: string, expert: number) =>
      parts.find((part) => part.kind === kind && part.expert === expert)?.tokens;
    // The fake gate ranks experts by id: every row goes to experts 3 and 2.
    assert.equal(tokens("gate", -1), 5);
    assert.deepEqual([0, 1, 2, 3].map((e) => tokens("expert", e)), [0, 0, 5, 5]);
    assert.equal(tokens("shared", 0), 5);
    for (const part of parts) {
      assert.equal(part.busyMs, part.executions * MS_PER_EXECUTION);
      assert.equal(part.queueDepth, 0);
    }
  }
});

Deno.test("buildLoadReport() carries node resources; a report without them still parses", () => {
  const sources = {
    backendId: "backend-1",
    manifest,
    executor: new FakeExecutor(),
    batcher: { stats: () => [] },
    engine: {
      stats: () => ({
        inFlightRequests: 0,
        inFlightRows: 0,
        requests: 0,
        rows: 0,
        rejected: 0,
        failed: 0,
      }),
    },
    startedAt: 0,
    now: 10,
    memory: { rssBytes: 0, heapUsedBytes: 0 },
  };
  const resources = {
    cpuMs: 12.5,
    netRxBytes: 100,
    netTxBytes: 200,
    accelerator: null,
    powerW: null,
  };
  const report = buildLoadReport({ ...sources, resources });
  assert.deepEqual(LoadReportSchema.parse(report).resources, resources);
  const older = buildLoadReport(sources);
  assert.equal("resources" in older, false);
  assert.equal(LoadReportSchema.parse(older).resources, undefined);
});
