import assert from "node:assert/strict";
import { ConfigError, resolveConfig } from "./config.ts";

Deno.test("resolveConfig() applies defaults, including the operator blocks", () => {
  const config = resolveConfig();
  assert.equal(config.router.port, 8080);
  assert.equal(config.router.policy, "p2c");
  assert.deepEqual(config.batching, {
    policy: "adaptive",
    min: 2,
    max: 16,
    max_wait_ms: 2,
    latency_budget_ms: 50,
    fill_wait_ms: 0,
    max_rows: 1024,
  });
  assert.deepEqual(config.expert_balancer, {
    enabled: true,
    strategy: "dynamic",
    placement: "auto",
    threshold: 0.93,
    adjust_interval: 60_000,
    evaluate_interval: 2_000,
    detect_window: 5_000,
    switch_gain: 0.15,
    redundancy: 0.25,
    window: 60_000,
    on_unreachable: "load_local",
  });
  assert.equal(config.state.kv, "data/switchyard.kv");
  assert.equal(config.gate.temperature, 1);
  assert.equal(config.alerts.expert_load_threshold, 0.8);
  assert.equal(config.alerts.latency_p99_ms, 1000);
  assert.equal(config.alerts.latency_window, 60_000);
  assert.equal(config.alerts.shed_ratio, 0.01);
  assert.equal(config.alerts.saturation, 0.9);
});

Deno.test("resolveConfig() reads YAML and env overrides win over the file", () => {
  const config = resolveConfig({
    fileText: "router:\n  port: 9000\n  health_interval: 250ms\nbatching: { max: 8 }\n",
    env: {
      SWITCHYARD_ROUTER__PORT: "9100",
      SWITCHYARD_ROUTER__BACKENDS: '["http://127.0.0.1:9001"]',
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "5m",
      UNRELATED: "x",
    },
  });
  assert.equal(config.router.port, 9100);
  assert.equal(config.router.health_interval, 250);
  assert.deepEqual(config.router.backends, ["http://127.0.0.1:9001"]);
  assert.equal(config.batching.max, 8);
  assert.equal(config.expert_balancer.adjust_interval, 300_000);
});

Deno.test("resolveConfig() fails fast naming the field", () => {
  const cases: [Parameters<typeof resolveConfig>[0], RegExp][] = [
    [{ fileText: "batching: { min: 20, max: 16 }" }, /batching\.min: min must be <= max/],
    [{ env: { SWITCHYARD_ROUTER__PORT: "70000" } }, /router\.port/],
    [{ fileText: "expert_balancer: { strategy: magic }" }, /expert_balancer\.strategy/],
    [
      { fileText: "expert_balancer: { adjust_interval: soon }" },
      /expert_balancer\.adjust_interval/,
    ],
    [{ fileText: "router: { backends: [ftp://x] }" }, /router\.backends\.0/],
    [{ fileText: "batching: { policy: turbo }" }, /batching\.policy/],
    [{ fileText: "auth: { admin_token: short }" }, /auth\.admin_token/],
    [{ fileText: "- a list" }, /mapping at the top level/],
    [{ fileText: "a: [" }, /not valid YAML/],
  ];
  for (const [options, message] of cases) {
    assert.throws(() => resolveConfig(options), (error: Error) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, message);
      return true;
    });
  }
});

Deno.test("the example config in deploy/ parses to the defaults", async () => {
  const text = await Deno.readTextFile(
    new URL("../deploy/switchyard.example.yaml", import.meta.url),
  );
  assert.deepEqual(resolveConfig({ fileText: text }), resolveConfig());
});

Deno.test("resolveConfig() requires prewarm.scaler_webhook for the webhook scaler", () => {
  assert.throws(
    () => resolveConfig({ env: { SWITCHYARD_PREWARM__SCALER: "webhook" } }),
    /Invalid config: prewarm\.scaler_webhook: must be set when prewarm\.scaler is webhook/,
  );
  const config = resolveConfig({
    env: {
      SWITCHYARD_PREWARM__SCALER: "webhook",
      SWITCHYARD_PREWARM__SCALER_WEBHOOK: "https://orchestrator.example.com/scale",
    },
  });
  assert.equal(config.prewarm.scaler, "webhook");
});
