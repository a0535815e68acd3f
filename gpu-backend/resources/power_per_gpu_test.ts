/**
 * Power attributed per GPU, from a fake `nvidia-smi` behind the runner interface to the
 * router's pool load: three backends on a two-GPU host (two share GPU 0) report their
 * own device only, and the pool's power is the devices' power, never a device twice.
 */
import assert from "node:assert/strict";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { aggregatePoolLoad, type BackendLoadSample } from "../../router/control/load/pool_load.ts";
import { reportRates } from "../../router/control/load/load_rates.ts";
import { fakeLoadReport } from "../../tests/_support/router/load_reports.ts";
import { NvidiaSmiSampler } from "./nvidia_smi.ts";
import { ownGpu } from "./own_gpu.ts";
import { readResources } from "./resource_meter.ts";

/** The host's GPUs: what `nvidia-smi --query-gpu=…` prints per device. */
const HOST = [
  "GPU-0a0a0a0a-0000-0000-0000-000000000000, 90, 30000, 81559, 300.00",
  "GPU-1b1b1b1b-1111-1111-1111-111111111111, 40, 10000, 81559, 200.00",
];

/** A fake nvidia-smi: every device, or the one `-i <index|uuid>` selects, like the real tool. */
function fakeNvidiaSmi(calls: string[][]) {
  return (args: readonly string[]) => {
    calls.push([...args]);
    const at = args.indexOf("-i");
    if (at < 0) return Promise.resolve({ success: true, stdout: HOST.join("\n") });
    const selector = args[at + 1]!;
    const line = HOST.find((l, i) => String(i) === selector || l.startsWith(`${selector},`));
    return Promise.resolve({ success: line !== undefined, stdout: line ?? "" });
  };
}

async function backendSample(
  name: string,
  cudaVisibleDevices: string | undefined,
  calls: string[][],
): Promise<BackendLoadSample> {
  const device = ownGpu({ provider: "cuda", deviceId: 0, cudaVisibleDevices });
  assert.notEqual(device, null);
  const sampler = new NvidiaSmiSampler({
    logger: new MemoryLogger(),
    run: fakeNvidiaSmi(calls),
    device: device!,
  });
  await sampler.sampleNow();
  const resources = readResources({
    net: { rxBytes: 0, txBytes: 0 },
    accelerator: sampler,
    cpuUsage: () => ({ user: 0, system: 0 }),
  });
  const before = fakeLoadReport({ backend: name, at: 1_700_000_000_000, resources });
  const after = fakeLoadReport({ backend: name, at: 1_700_000_001_000, resources });
  return {
    id: `host:${name}`,
    name,
    report: after,
    rates: reportRates(before, after),
    receivedAt: 1_700_000_001_000,
    error: undefined,
  };
}

Deno.test("each backend reads its own GPU and the pool counts a shared GPU once", async () => {
  const calls: string[][] = [];
  const samples = [
    await backendSample("backend-1", "0", calls),
    await backendSample("backend-2", "0", calls),
    await backendSample("backend-3", "GPU-1b1b1b1b-1111-1111-1111-111111111111", calls),
  ];
  assert.deepEqual(calls.map((args) => args.slice(0, 2)), [
    ["-i", "0"],
    ["-i", "0"],
    ["-i", "GPU-1b1b1b1b-1111-1111-1111-111111111111"],
  ]);
  // Each report carries its device's power only.
  assert.deepEqual(samples.map((s) => s.report!.resources!.powerW), [300, 300, 200]);
  const load = aggregatePoolLoad(samples, { now: 1_700_000_001_000, staleAfterMs: 3000 });
  assert.deepEqual(load.backends.map((b) => b.powerW), [150, 150, 200]);
  const total = load.backends.reduce((sum, b) => sum + (b.powerW ?? 0), 0);
  assert.equal(total, 500, "the host's two GPUs, each once");
  // The device's own reading stays as read, for the dashboard's accelerator view.
  assert.equal(load.backends[0]!.accelerator?.powerW, 300);
});

Deno.test("a stale backend on a shared GPU is not counted in the split", async () => {
  const calls: string[][] = [];
  const fresh = await backendSample("backend-1", "0", calls);
  const stale = { ...(await backendSample("backend-2", "0", calls)), error: "connection refused" };
  const load = aggregatePoolLoad([fresh, stale], {
    now: 1_700_000_001_000,
    staleAfterMs: 3000,
  });
  assert.equal(load.backends[0]!.powerW, 300);
  assert.equal(load.backends[1]!.stale, true);
});

Deno.test("without device ids (an older backend) the reported power is kept as it is", async () => {
  const calls: string[][] = [];
  const sample = await backendSample("backend-1", "0", calls);
  const old = structuredClone(sample);
  delete old.report!.resources!.accelerator!.deviceIds;
  const twin = { ...structuredClone(old), id: "host:backend-2", name: "backend-2" };
  const load = aggregatePoolLoad([old, twin], { now: 1_700_000_001_000, staleAfterMs: 3000 });
  assert.deepEqual(load.backends.map((b) => b.powerW), [300, 300]);
});
