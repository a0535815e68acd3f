import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import { silentLogger } from "../../shared/logger.ts";
import { loadManifest } from "./start_backend.ts";
import { MoeEngine } from "../engine/engine.ts";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import { ReferenceExecutor } from "../../tools/model/reference_executor.ts";
import { makeTinyModel, TINY } from "../../tests/_support/tiny_model.ts";
import { adviceRoutes } from "./advice_routes.ts";
import { InputRecorder } from "../advice/input_recorder.ts";

/** An app with only the advice routes, over an engine whose runner can be held. */
async function setUp() {
  const dir = await makeTinyModel();
  const manifest = await loadManifest(dir);
  const executor = new ReferenceExecutor(dir, manifest);
  let hold: Promise<void> = Promise.resolve();
  let started = () => {};
  const runner = {
    run: async (...args: Parameters<ReferenceExecutor["execute"]>) => {
      started();
      await hold;
      return (await executor.execute(...args)).output;
    },
  };
  const engine = new MoeEngine({ manifest, runner, temperature: 1, maxQueuedRows: 1000 });
  const recorder = new InputRecorder({ width: TINY.dModel, capacity: 32, random: createRandom(4) });
  const app = new Hono();
  app.onError((error) => errorResponse(error as ApiError));
  app.route("/", adviceRoutes({ engine, recorder, logger: silentLogger }));
  const post = (body: string) =>
    app.request("/v2/advice/gate-bias", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
  const holdRunner = () => {
    let release = () => {};
    hold = new Promise((resolve) => release = resolve);
    const running = new Promise<void>((resolve) => started = resolve);
    return { release, running };
  };
  return { dir, engine, recorder, app, post, holdRunner };
}

Deno.test("POST /v2/advice/gate-bias answers the advisor's shape, one at a time", async () => {
  const { dir, recorder, post, holdRunner } = await setUp();
  try {
    const empty = await post("");
    assert.equal(empty.status, 409);
    assert.match((await empty.json()).error, /no inputs recorded yet/);
    const gaussian = createGaussian(createRandom(8));
    recorder.offer(Float32Array.from({ length: 20 * TINY.dModel }, gaussian), 20);
    const bad = await post(JSON.stringify({ steps: 0 }));
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /Cannot evaluate a routing bias: steps: /);
    const unknown = await post(JSON.stringify({ temperature: 2 }));
    assert.equal(unknown.status, 400);

    const { release, running } = holdRunner();
    const first = post(JSON.stringify({ steps: 20, rate: 0.1 }));
    await running;
    const second = await post("{}");
    assert.equal(second.status, 409);
    assert.match((await second.json()).error, /another evaluation is running/);
    release();
    const response = await first;
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(Object.keys(body).sort(), [
      "layers",
      "output_deviation",
      "rows",
      "selection_changed",
    ]);
    assert.equal(body.rows, 20);
    assert.deepEqual(body.layers.map((l: { layer: number }) => l.layer), [0, 1]);
    for (const layer of body.layers) {
      assert.deepEqual(Object.keys(layer).sort(), [
        "balancedness_after",
        "balancedness_before",
        "bias",
        "layer",
      ]);
      assert.equal(layer.bias.length, TINY.experts);
    }
    assert.ok(Number.isFinite(body.output_deviation.relative_l2));
    assert.ok(Number.isFinite(body.output_deviation.max_abs));
    // Free again once done.
    assert.equal((await post("{}")).status, 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("PUT /v2/gate/bias sets, validates and clears the engine's bias", async () => {
  const { dir, engine, app } = await setUp();
  const put = (body: string) =>
    app.request("/v2/gate/bias", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body,
    });
  try {
    const bias = [[0, 0, 0, 0, 0, 0, 0, -0.5], [0.25, 0, 0, 0, 0, 0, 0, 0]];
    const set = await put(JSON.stringify({ bias }));
    assert.equal(set.status, 200);
    assert.deepEqual(await set.json(), { active: true, max_abs: [0.5, 0.25] });
    const wrong = await put(JSON.stringify({ bias: [[0, 0, 0, 0, 0, 0, 0, 0]] }));
    assert.equal(wrong.status, 400);
    assert.match((await wrong.json()).error, /bias has 1 layers, the model has 2/);
    assert.equal((await put("not json")).status, 400);
    assert.equal((await put("{}")).status, 400, "bias is required (null clears)");
    assert.deepEqual(engine.routingBias(), { active: true, max_abs: [0.5, 0.25] });
    const cleared = await put(JSON.stringify({ bias: null }));
    assert.deepEqual(await cleared.json(), { active: false, max_abs: [] });
    assert.equal(engine.routingBias().active, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
