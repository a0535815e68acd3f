// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:baseline`: the numbers later work improves on, side by side
 * in one run on one machine:
 *
 *   Step 1: one expert's ONNX session in this thread, batch sizes 1…256 → rows/s
 *           (the per-expert compute limit at the best batch size).
 *   Step 2: the full engine in process (executor Workers + micro-batcher + gated
 *           forward, no HTTP), closed loop → rows/s, p50/p99.
 *   Step 3: one backend process called directly over HTTP, same workload.
 *   Step 4: the same backend through the router.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import ort from "onnxruntime-node";
import { type ModelManifest, modelPartPath } from "../../shared/model_manifest.ts";
import { decodeInferRequest } from "../../shared/infer_request_codec.ts";
import { MicroBatcher } from "../../gpu-backend/batching/micro_batcher.ts";
import { adaptivePolicy } from "../../gpu-backend/batching/policies.ts";
import { OrtPartExecutor } from "../../gpu-backend/execution/ort_part_executor.ts";
import { MoeEngine } from "../../gpu-backend/moe/engine.ts";
import { generateModel } from "../model/generate.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { freePort, startProcess } from "../pool/processes.ts";
import { closedLoop, emptyResult, type LoadResult } from "./load_generator.ts";
import { formatTable, round, summarize } from "./stats.ts";
import { prepareWorkload } from "./workload.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    model: { type: "string", default: "models/demo" },
    duration: { type: "string", default: "8" },
    concurrency: { type: "string", default: "32" },
    executors: { type: "string", default: "2" },
  },
});
const durationS = Number(values.duration);
const concurrency = Number(values.concurrency);
const token = "bench-internal-token-0123456789";
if (!existsSync(join(values.model, "moe.json"))) await generateModel(values.model, {});
const manifest: ModelManifest = JSON.parse(await Deno.readTextFile(join(values.model, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(values.model),
  headers: { authorization: `Bearer ${token}` },
});
const bounds = { min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 };

// Step 1: one expert, one thread.
const expertBytes = await Deno.readFile(
  join(values.model, modelPartPath(manifest, { kind: "expert", layer: 0, expert: 0 })),
);
const session = await ort.InferenceSession.create(expertBytes, {
  executionProviders: ["cpu"],
  intraOpNumThreads: 1,
});
const expertRows: [number, number][] = [];
for (const batch of [1, 4, 16, 64, 256]) {
  const input = new ort.Tensor("float32", new Float32Array(batch * manifest.d_model).fill(0.1), [
    batch,
    manifest.d_model,
  ]);
  let rows = 0;
  const started = performance.now();
  while (performance.now() - started < 1000) {
    await session.run({ x: input });
    rows += batch;
  }
  expertRows.push([batch, rows / ((performance.now() - started) / 1000)]);
}
await session.release();
const [bestBatch, bestRowsPerS] = expertRows.reduce((a, b) => (b[1] > a[1] ? b : a));

// Step 2: the engine in process.
const executor = await OrtPartExecutor.create({
  modelDir: values.model,
  manifest,
  workers: Number(values.executors),
  providers: ["cpu"],
});
const engine = new MoeEngine({
  manifest,
  runner: new MicroBatcher({ executor, policy: adaptivePolicy(bounds) }),
  temperature: 1,
  maxQueuedRows: 1 << 20,
});
const decoded = requests.map((r) =>
  decodeInferRequest(r.body, {
    model: { name: manifest.name, dModel: manifest.d_model },
    headerLength: Number(r.headers["inference-header-content-length"]),
    maxTokens: 1 << 20,
  })
);
const inProcess: LoadResult = emptyResult();
{
  const t0 = performance.now();
  let index = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() - t0 < durationS * 1000) {
      const request = decoded[index++ % decoded.length]!;
      const started = performance.now();
      await engine.infer(request.tokens, request.rows);
      inProcess.ok++;
      inProcess.rows += request.rows;
      inProcess.latencies.push(performance.now() - started);
    }
  }));
  inProcess.seconds = (performance.now() - t0) / 1000;
}
await executor.close();

// Steps 3 and 4: over HTTP, directly and through the router.
const backendPort = freePort();
const backend = await startProcess("gpu-backend/main.ts", {
  url: `http://127.0.0.1:${backendPort}`,
  token,
  env: {
    SWITCHYARD_MODEL__DIR: values.model,
    SWITCHYARD_BACKEND__PORT: String(backendPort),
    SWITCHYARD_BACKEND__EXECUTORS: values.executors,
    SWITCHYARD_AUTH__INTERNAL_TOKEN: token,
    SWITCHYARD_LOG__LEVEL: "warn",
  },
});
const routerPort = freePort();
const router = await startProcess("router/main.ts", {
  url: `http://127.0.0.1:${routerPort}`,
  env: {
    SWITCHYARD_ROUTER__HOST: "127.0.0.1",
    SWITCHYARD_ROUTER__PORT: String(routerPort),
    SWITCHYARD_ROUTER__BACKENDS: JSON.stringify([backend.url]),
    SWITCHYARD_AUTH__INTERNAL_TOKEN: token,
    SWITCHYARD_LOG__LEVEL: "warn",
  },
});
const path = `/v2/models/${manifest.name}/infer`;
let direct: LoadResult;
let viaRouter: LoadResult;
try {
  await closedLoop({ url: backend.url + path, requests, concurrency: 8, durationS: 1 });
  direct = await closedLoop({ url: backend.url + path, requests, concurrency, durationS });
  viaRouter = await closedLoop({ url: router.url + path, requests, concurrency, durationS });
} finally {
  await router.kill();
  await backend.kill();
}

const meanRows = requests.reduce((sum, r) => sum + r.rows, 0) / requests.length;
console.log(
  `bench:baseline — ${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, ` +
    `${manifest.shared_experts} shared, d_model ${manifest.d_model}, d_ff ${manifest.d_ff}; ` +
    `${values.executors} executor Worker(s); closed loop, ${concurrency} clients, ${durationS} s; ` +
    `mean request ${round(meanRows, 2)} rows; ${navigator.hardwareConcurrency} CPU cores\n`,
);
console.log("One expert, one thread (onnxruntime CPU):");
console.log(formatTable(["batch rows", "rows/s"], expertRows.map(([b, r]) => [b, round(r, 0)])));
console.log(`→ compute limit per expert: ${round(bestRowsPerS, 0)} rows/s at batch ${bestBatch}\n`);
const line = (name: string, r: LoadResult) => {
  const s = summarize(r.latencies);
  return [
    name,
    round(r.rows / r.seconds, 0),
    round(r.ok / r.seconds, 1),
    round(s.p50),
    round(s.p99),
    r.errors,
  ];
};
console.log(formatTable(["path", "tokens/s", "req/s", "p50 ms", "p99 ms", "errors"], [
  line("engine in process", inProcess),
  line("backend direct (HTTP)", direct!),
  line("via router (HTTP)", viaRouter!),
]));
console.log(
  `\nvia router / direct throughput: ${
    round((viaRouter!.rows / viaRouter!.seconds) / (direct!.rows / direct!.seconds))
  }×`,
);
Deno.exit(0);
