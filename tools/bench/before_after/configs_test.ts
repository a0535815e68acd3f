import assert from "node:assert/strict";
import { resolveConfig } from "../../../shared/config.ts";
import { placementConfigs, PLACEMENTS, poolEnv } from "./configs.ts";

Deno.test("the configurations differ only in what moves experts", () => {
  for (const config of placementConfigs(PLACEMENTS)) {
    for (const key of Object.keys(config.env)) {
      assert.match(
        key,
        /^(SWITCHYARD_EXPERT_BALANCER__\w+|SWITCHYARD_PREWARM__ENABLED)$/,
        `${config.name} sets ${key}`,
      );
    }
    // Batching and entry routing stay the defaults for every configuration.
    const resolved = resolveConfig({ env: config.env });
    assert.deepEqual(resolved.batching, resolveConfig().batching);
    assert.deepEqual(resolved.router.policy, resolveConfig().router.policy);
  }
  assert.deepEqual(placementConfigs(["switchyard"])[0]!.env, {}, "the default: nothing set");
  // The expert-parallel baselines stay expert parallel where everything fits.
  for (const name of ["static", "eplb-10min"]) {
    assert.equal(
      placementConfigs([name])[0]!.env.SWITCHYARD_EXPERT_BALANCER__PLACEMENT,
      "expert_parallel",
    );
  }
  // Every baseline keeps the pre-warm job from re-placing it.
  for (const name of ["static", "eplb-10min", "replicate-all"]) {
    assert.equal(placementConfigs([name])[0]!.env.SWITCHYARD_PREWARM__ENABLED, "false", name);
  }
  assert.deepEqual(placementConfigs(["eplb-10min"]).map((c) => c.eplb), [true]);
  assert.throws(() => placementConfigs(["static", "magic"]), /"magic": not one of static, /);
});

Deno.test("poolEnv() sets the pool's size-independent settings once for every configuration", () => {
  const env = poolEnv({
    backends: 4,
    budgetMb: 77.1,
    redundancy: 0.6,
    simulated: {
      fixedMs: 0.8,
      perExpertMs: 0.01,
      perRowMs: 0.004,
      loadFixedMs: 1,
      loadMsPerMb: 0.0164,
    },
    adminToken: "t".repeat(24),
  });
  assert.equal(env.SWITCHYARD_BACKEND__MEMORY_BUDGET_MB, "77.1");
  assert.equal(env.SWITCHYARD_EXPERT_BALANCER__REDUNDANCY, "0.6");
  assert.equal(env.SWITCHYARD_BACKEND__EXECUTOR, "simulated");
  assert.equal(env.SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS, "0.004");
  assert.equal(env.SWITCHYARD_BACKEND__SIMULATED__PER_EXPERT_MS, "0.01");
  const real = poolEnv({
    backends: 2,
    budgetMb: null,
    redundancy: null,
    simulated: null,
    adminToken: "t".repeat(24),
  });
  assert.deepEqual(Object.keys(real), ["SWITCHYARD_AUTH__ADMIN_TOKEN"]);
  // Parses: every value is a valid setting.
  resolveConfig({ env });
});
