import assert from "node:assert/strict";
import type { Alert, AlertSource } from "../alerts/alert_types.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import {
  findSamples,
  parseExposition,
  sumSamples,
} from "../../../shared/metrics/parse_exposition.ts";
import { RouterMetrics, type RouterMetricsDeps } from "./router_metrics.ts";
import { promtoolAvailable, promtoolCheckMetrics } from "../../../tests/_support/system_tools.ts";
import { UNKNOWN_MODEL } from "./request_metrics.ts";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { eplbSource } from "../../../tests/_support/router/eplb_source.ts";

function view(name: string, healthy: boolean, inFlight: number): BackendView {
  return {
    id: `127.0.0.1:${name.length}`,
    name,
    url: `http://127.0.0.1:${name.length}`,
    healthy,
    inFlight,
    models: ["m"],
    details: undefined,
    checkedAt: 0,
    lastError: healthy ? undefined : "down",
  };
}

const LOAD: PoolLoad = {
  at: 0,
  backends: [],
  models: [{
    model: "m",
    layers: [
      { layer: 0, expertTokensPerS: [1, 1], balancedness: 1, expertSkew: { top10Share: 0, cv: 0 } },
      {
        layer: 1,
        expertTokensPerS: [3, 1],
        balancedness: 0.625,
        expertSkew: { top10Share: 0.75, cv: 0.5 },
      },
    ],
  }],
  pool: {
    reporting: 2,
    balancedness: 0.8,
    worstLayer: { model: "m", layer: 1, balancedness: 0.625 },
    utilisationBalancedness: 0.9,
    utilisationCv: 0.25,
  },
};

function alert(kind: Alert["kind"], subject: string): Alert {
  return {
    id: `${kind}:${subject}`,
    kind,
    subject,
    state: "firing",
    firedAt: 0,
    resolvedAt: undefined,
    value: 0.9,
    threshold: 0.8,
    message: "hot",
  };
}

function event(model: string, status: number, ms: number): InferenceEvent {
  return {
    requestId: "r",
    model,
    requestType: undefined,
    rows: 1,
    backend: "b1",
    experts: undefined,
    batches: undefined,
    status,
    ms,
    at: 0,
  };
}

function metrics(overrides: Partial<RouterMetricsDeps> = {}): RouterMetrics {
  const alerts: AlertSource = {
    active: () => [alert("expert_hot", "b1 L0/E3"), alert("expert_hot", "b2 L1/E0")],
    recent: () => [],
  };
  return new RouterMetrics({
    version: "9.9.9",
    views: () => [view("b1", true, 3), view("b22", false, 0)],
    knownModel: (model) => model === "m",
    load: () => LOAD,
    plans: {
      models: () => ["m", "n"],
      currentVersion: (m) => Promise.resolve(m === "m" ? 7 : null),
      reconciliations: () => ({ reconciled: 3, failed: 1 }),
    },
    alerts,
    logShipping: () => ({ shipped: 40, dropped: 2, buffered: 5, failedPushes: 1 }),
    memory: () => ({ rssBytes: 1000, heapUsedBytes: 500 }),
    overload: {
      ejections: () => new Map([["timeout", 2]]),
      excused: () => 5,
      panic: () => false,
      lagMs: () => 250,
      sheds: () => new Map([["router_full", 7]]),
      retries: () => new Map([["unreachable", 3]]),
      retriesRefused: () => 1,
      bodyReaders: () => 0,
      inFlight: () => 4,
    },
    eplb: eplbSource(),
    ...overrides,
  });
}

Deno.test("RouterMetrics counts requests by model and code, unknown models folded", async () => {
  const m = metrics();
  m.observer(event("m", 200, 12));
  m.observer(event("m", 200, 3));
  m.observer(event("m", 503, 1));
  m.observer(event("random-probe-name", 404, 1));
  const text = parseExposition(await m.render());
  assert.equal(
    sumSamples(text, "switchyard_router_requests_total", { model: "m", code: "200" }),
    2,
  );
  assert.equal(
    sumSamples(text, "switchyard_router_requests_total", { model: "m", code: "503" }),
    1,
  );
  assert.equal(
    sumSamples(text, "switchyard_router_requests_total", { model: UNKNOWN_MODEL, code: "404" }),
    1,
  );
  assert.equal(findSamples(text, "switchyard_router_requests_total").length, 3);
  const okCount = findSamples(text, "switchyard_router_request_duration_seconds_count", {
    model: "m",
    code: "200",
  });
  assert.equal(okCount[0]?.value, 2);
  const okSum = findSamples(text, "switchyard_router_request_duration_seconds_sum", {
    model: "m",
    code: "200",
  });
  assert.ok(Math.abs(okSum[0]!.value - 0.015) < 1e-9);
  // 3 ms falls in le=0.005, 12 ms only from le=0.025 on.
  const bucket = (le: string) =>
    sumSamples(text, "switchyard_router_request_duration_seconds_bucket", {
      model: "m",
      code: "200",
      le,
    });
  assert.equal(bucket("0.0025"), 0);
  assert.equal(bucket("0.005"), 1);
  assert.equal(bucket("0.01"), 1);
  assert.equal(bucket("0.025"), 2);
  assert.equal(bucket("+Inf"), 2);
});

Deno.test("RouterMetrics reads backends, balancedness, plans, alerts and logs at scrape", async () => {
  const text = parseExposition(await metrics().render());
  const one = (name: string, labels: Record<string, string> = {}) => {
    const found = findSamples(text, name, labels);
    assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`);
    return found[0]!.value;
  };
  assert.equal(one("switchyard_build_info", { version: "9.9.9" }), 1);
  assert.equal(one("switchyard_router_backend_up", { backend: "b1" }), 1);
  assert.equal(one("switchyard_router_backend_up", { backend: "b22" }), 0);
  assert.equal(one("switchyard_router_backend_in_flight_requests", { backend: "b1" }), 3);
  assert.equal(one("switchyard_pool_balancedness"), 0.8);
  assert.equal(one("switchyard_pool_worst_layer_balancedness"), 0.625);
  assert.equal(one("switchyard_pool_utilisation_balancedness"), 0.9);
  assert.equal(one("switchyard_pool_utilisation_cv"), 0.25);
  assert.equal(one("switchyard_pool_backends_reporting"), 2);
  assert.equal(one("switchyard_layer_balancedness", { model: "m", layer: "1" }), 0.625);
  // A layer with no routed-expert load has no balancedness to show (not a perfect 1).
  const idle = parseExposition(
    await metrics({
      load: () => ({
        ...LOAD,
        models: [{
          model: "m",
          layers: [{
            layer: 0,
            expertTokensPerS: [0, 0],
            balancedness: 1,
            expertSkew: { top10Share: 0, cv: 0 },
          }],
        }],
      }),
    }).render(),
  );
  assert.equal(findSamples(idle, "switchyard_layer_balancedness", { model: "m" }).length, 0);
  assert.equal(one("switchyard_layer_expert_skew_top10_share", { model: "m", layer: "1" }), 0.75);
  assert.equal(one("switchyard_layer_expert_skew_cv", { model: "m", layer: "1" }), 0.5);
  assert.equal(one("switchyard_plan_current_version", { model: "m" }), 7);
  assert.equal(findSamples(text, "switchyard_plan_current_version", { model: "n" }).length, 0);
  assert.equal(one("switchyard_plan_reconciliations_total", { outcome: "reconciled" }), 3);
  assert.equal(one("switchyard_plan_reconciliations_total", { outcome: "failed" }), 1);
  assert.equal(one("switchyard_alerts_firing", { kind: "expert_hot" }), 2);
  assert.equal(one("switchyard_alerts_firing", { kind: "backend_down" }), 0);
  assert.equal(one("switchyard_alerts_firing", { kind: "balance_low" }), 0);
  assert.equal(one("switchyard_alert_firing", { kind: "expert_hot", subject: "b2 L1/E0" }), 1);
  assert.equal(one("switchyard_log_lines_shipped_total"), 40);
  assert.equal(one("switchyard_log_lines_dropped_total"), 2);
  assert.equal(one("switchyard_log_lines_buffered"), 5);
  assert.equal(one("switchyard_log_push_failures_total"), 1);
  assert.equal(one("switchyard_process_resident_memory_bytes"), 1000);
  assert.equal(text.types.get("switchyard_log_lines_dropped_total"), "counter");
  assert.equal(text.types.get("switchyard_router_request_duration_seconds"), "histogram");
});

Deno.test("RouterMetrics leaves out alert, log and plan metrics whose source is absent", async () => {
  const body = await metrics({ alerts: undefined, logShipping: undefined, plans: undefined })
    .render();
  assert.doesNotMatch(body, /switchyard_alert/);
  assert.doesNotMatch(body, /switchyard_log_lines/);
  assert.doesNotMatch(body, /switchyard_plan_current_version/);
  assert.match(body, /^switchyard_build_info\{version="9\.9\.9"\} 1$/m);
});

Deno.test("RouterMetrics follows the sources between scrapes (collect at scrape)", async () => {
  let healthy = true;
  const m = metrics({ views: () => [view("b1", healthy, 0)] });
  assert.match(await m.render(), /^switchyard_router_backend_up\{backend="b1"\} 1$/m);
  healthy = false;
  assert.match(await m.render(), /^switchyard_router_backend_up\{backend="b1"\} 0$/m);
});

Deno.test("RouterMetrics never uses prom-client's default registry", async () => {
  const { register } = await import("prom-client");
  metrics();
  assert.doesNotMatch(await register.metrics(), /switchyard_/);
});

const promtool = await promtoolAvailable();
Deno.test({
  name: "RouterMetrics output passes `promtool check metrics` with every source present",
  // Without promtool: fails in CI, skipped (with this reason) elsewhere.
  ignore: !promtool && Deno.env.get("CI") === undefined,
  async fn() {
    assert.ok(promtool, "promtool is missing: apt-get install -y prometheus");
    const m = metrics();
    m.observer(event("m", 200, 12));
    assert.deepEqual(await promtoolCheckMetrics(await m.render()), { code: 0, output: "" });
  },
});

Deno.test("RouterMetrics reports ejections, sheds and retries by label, lag in seconds", async () => {
  const text = await metrics().render();
  assert.match(text, /^switchyard_router_ejections_total\{reason="timeout"\} 2$/m);
  assert.match(text, /^switchyard_router_ejections_total\{reason="connection"\} 0$/m);
  assert.match(text, /^switchyard_router_shed_total\{reason="router_full"\} 7$/m);
  assert.match(text, /^switchyard_router_shed_total\{reason="no_backend"\} 0$/m);
  assert.match(text, /^switchyard_router_retries_total\{cause="unreachable"\} 3$/m);
  assert.match(text, /^switchyard_router_event_loop_lag_seconds 0\.25$/m);
  assert.match(text, /^switchyard_router_timeouts_excused_total 5$/m);
  assert.match(text, /^switchyard_router_in_flight_requests 4$/m);
});

Deno.test("every router metric is documented in docs/METRICS.md", async () => {
  const docs = await Deno.readTextFile(new URL("../../../docs/METRICS.md", import.meta.url));
  const families = [...parseExposition(await metrics().render()).types.keys()];
  assert.ok(families.length >= 15, `families: ${families}`);
  for (const name of families) assert.ok(docs.includes(`\`${name}\``), `${name} not in docs`);
});
