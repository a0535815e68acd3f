/**
 * Expert residency on a real backend (onnxruntime, the tiny model, in process over
 * loopback HTTP) under a memory budget of three experts: cold experts still answer
 * exactly like the reference and are counted (residency endpoint, load report,
 * readiness); `POST /v2/residency/warm` needs the internal token, validates its parts and
 * warms within the budget.
 */
import assert from "node:assert/strict";
import { resolveConfig } from "../shared/config.ts";
import { LoadReportSchema } from "../shared/load_report.ts";
import { silentLogger } from "../shared/logger.ts";
import { startBackend } from "../gpu-backend/server/start_backend.ts";
import { loadManifest } from "../gpu-backend/server/start_backend.ts";
import { expertFileBytes } from "../gpu-backend/residency/expert_bytes.ts";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const TOKEN = "residency-test-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };

Deno.test("a backend under a memory budget serves cold experts correctly and warms on request", async (t) => {
  const modelDir = await makeTinyModel();
  const sizes = (await expertFileBytes(modelDir, await loadManifest(modelDir))).flat();
  const largest = Math.max(...sizes);
  // Room for three of the 16 routed experts (2 layers × 8).
  const budgetBytes = Math.floor(3.5 * largest);
  const config = resolveConfig({
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_BACKEND__PORT: "0",
      SWITCHYARD_BACKEND__EXECUTORS: "1",
      SWITCHYARD_BACKEND__EXECUTION_PROVIDERS: '["cpu"]',
      SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: String(budgetBytes / 2 ** 20),
      SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
    },
  });
  const backend = await startBackend(config, silentLogger);
  const get = async (path: string) => {
    const response = await fetch(`${backend.url}${path}`, { headers: AUTH });
    assert.equal(response.status, 200, path);
    return await response.json();
  };
  const warmRequest = (body: unknown, headers: Record<string, string> = AUTH) =>
    fetch(`${backend.url}/v2/residency/warm`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  try {
    await t.step("start-up warms experts up to the budget, one per layer in turn", async () => {
      const report = await get("/v2/residency");
      assert.equal(report.budget_bytes, budgetBytes);
      assert.deepEqual(report.warm.map((w: { part: string }) => w.part).sort(), [
        "L0/E0",
        "L0/E1",
        "L1/E0",
      ]);
      assert.ok(report.used_bytes <= budgetBytes);
      assert.deepEqual(report.cold_starts, {});
    });

    await t.step("cold experts answer like the reference and are counted", async () => {
      const reference = await loadReferenceModel(modelDir);
      const traffic = (await loadDemoTraffic(modelDir))!;
      const random = createRandom(5);
      for (const [i, type] of ["chat", "code", "math", "chat", "code", "math"].entries()) {
        const rows = 1 + (i % 3);
        const tokens = demoTokens(traffic, type, rows, random);
        const res = await infer(backend.url, TINY.name, tokens, TINY.dModel, { headers: AUTH });
        assert.equal(res.status, 200, JSON.stringify(res.error));
        const expected = reference.forward(tokens, rows).output;
        assert.ok(maxAbsDiff(res.decoded!.tensors.get("output")!.data, expected) <= 1e-4);
      }
      const report = await get("/v2/residency");
      const counts = Object.values(report.cold_starts) as { count: number; ms_max: number }[];
      const total = counts.reduce((sum, c) => sum + c.count, 0);
      assert.ok(total > 0, "some experts started cold");
      assert.ok(report.used_bytes <= budgetBytes, "idle experts fit the budget again");
      assert.equal(report.warm.length, 3);
      // The same counts in the load report (per part) and in the readiness details.
      const load = LoadReportSchema.parse(await get("/v2/load"));
      const perPart = load.parts.filter((p) => p.kind === "expert");
      assert.equal(perPart.reduce((sum, p) => sum + p.coldStarts!, 0), total);
      for (const part of perPart) {
        assert.equal(part.coldStarts, report.cold_starts[part.part]?.count ?? 0, part.part);
      }
      const ready = await get("/v2/health/ready");
      assert.equal(ready.details.placement.cold_starts, total);
      assert.deepEqual(ready.details.placement.residency.cold_starts, report.cold_starts);
    });

    await t.step("POST /v2/residency/warm requires the internal token", async () => {
      const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong-0123456789" }];
      for (const headers of attempts) {
        const response = await warmRequest({ parts: ["L0/E5"] }, headers);
        assert.equal(response.status, 401);
        await response.body?.cancel();
      }
    });

    await t.step("POST /v2/residency/warm names a bad part", async () => {
      for (
        const [parts, message] of [
          [["L0/E5", "E5"], /parts\.1 must look like "L0\/E3", got "E5"/],
          [["L0/E8"], /parts\.0 "L0\/E8": the model has 8 expert/],
          [["L2/E0"], /parts\.0 "L2\/E0": the model has 2 layer/],
          [[], /parts/],
        ] as const
      ) {
        const response = await warmRequest({ parts });
        assert.equal(response.status, 400);
        assert.match((await response.json()).error, message);
      }
    });

    await t.step("POST /v2/residency/warm warms in priority order within the budget", async () => {
      const before = await get("/v2/residency");
      const coldBefore = JSON.stringify(before.cold_starts);
      const wanted = ["L0/E5", "L0/E6", "L1/E7"];
      const response = await warmRequest({ parts: [...wanted, "L0/E7", "L0/gate"] });
      assert.equal(response.status, 200);
      const result = await response.json();
      const previouslyWarm = before.warm.map((w: { part: string }) => w.part);
      const stillWanted = previouslyWarm.filter((p: string) => wanted.includes(p));
      assert.deepEqual(
        [...result.warmed, ...result.already_warm.filter((p: string) => p !== "L0/gate")].sort(),
        wanted.sort(),
      );
      assert.deepEqual(result.skipped, ["L0/E7"]);
      assert.deepEqual(
        result.evicted.sort(),
        previouslyWarm.filter((p: string) => !stillWanted.includes(p)).sort(),
      );
      const after = await get("/v2/residency");
      assert.deepEqual(after.warm.map((w: { part: string }) => w.part).sort(), wanted.sort());
      // Warm-ups are not cold starts.
      assert.equal(JSON.stringify(after.cold_starts), coldBefore);
    });
  } finally {
    await backend.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});

Deno.test("a simulated backend under a budget pays and counts cold starts", async () => {
  const modelDir = await makeTinyModel();
  const sizes = (await expertFileBytes(modelDir, await loadManifest(modelDir))).flat();
  const budgetBytes = Math.floor(2.5 * Math.max(...sizes));
  const config = resolveConfig({
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_BACKEND__PORT: "0",
      SWITCHYARD_BACKEND__EXECUTOR: "simulated",
      SWITCHYARD_BACKEND__SIMULATED__LOAD_FIXED_MS: "2",
      SWITCHYARD_BACKEND__SIMULATED__LOAD_MS_PER_MB: "0",
      SWITCHYARD_BACKEND__MEMORY_BUDGET_MB: String(budgetBytes / 2 ** 20),
    },
  });
  const backend = await startBackend(config, silentLogger);
  try {
    const random = createRandom(9);
    for (let i = 0; i < 6; i++) {
      const tokens = Float32Array.from({ length: 4 * TINY.dModel }, () => random() * 2 - 1);
      const res = await infer(backend.url, TINY.name, tokens, TINY.dModel);
      assert.equal(res.status, 200, JSON.stringify(res.error));
    }
    const report = await (await fetch(`${backend.url}/v2/residency`)).json();
    const counts = Object.values(report.cold_starts) as { count: number; ms_sum: number }[];
    assert.ok(counts.length > 0, "cold starts were counted");
    assert.ok(counts.every((c) => c.count > 0 && c.ms_sum > 0), "each took its load time");
    assert.ok(report.warm.length <= 2 && report.used_bytes <= budgetBytes);
  } finally {
    await backend.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
