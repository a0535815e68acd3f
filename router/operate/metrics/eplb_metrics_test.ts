/** @module The EPLB health metrics: what they read from the balancer and the cost window. */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { findSamples, parseExposition } from "../../../shared/metrics/parse_exposition.ts";
import { promtoolAvailable, promtoolCheckMetrics } from "../../../tests/_support/system_tools.ts";
import { eplbMetrics } from "./eplb_metrics.ts";
import { eplbSource } from "../../../tests/_support/router/eplb_source.ts";

const MIB = 1048576;

Deno.test("eplbMetrics() exports switches, their duration, moves, the held rebalance and hops", async () => {
  const registry = new Registry();
  eplbMetrics(registry, eplbSource());
  const text = parseExposition(await registry.metrics());
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = findSamples(text, name, labels);
    assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}`);
    return found[0]!.value;
  };
  assert.equal(
    value("switchyard_eplb_rebalances_total", { outcome: "switched", trigger: "balancer" }),
    1,
  );
  assert.equal(
    value("switchyard_eplb_rebalances_total", { outcome: "stage_failed", trigger: "balancer" }),
    1,
  );
  assert.equal(value("switchyard_eplb_rebalance_duration_seconds_count"), 1);
  assert.equal(value("switchyard_eplb_rebalance_duration_seconds_sum"), 1.5);
  assert.equal(value("switchyard_eplb_rebalance_duration_seconds_bucket", { le: "2.5" }), 1);
  assert.equal(value("switchyard_eplb_rebalance_duration_seconds_bucket", { le: "1" }), 0);
  assert.equal(value("switchyard_eplb_seconds_since_rebalance", { model: "m" }), 60);
  assert.equal(value("switchyard_eplb_moved_experts_total"), 12);
  assert.equal(value("switchyard_eplb_moved_bytes_total"), 12 * MIB);
  assert.equal(value("switchyard_eplb_rebalance_due_seconds", { reason: "adjust_interval" }), 30);
  assert.equal(value("switchyard_eplb_adjust_interval_seconds"), 60);
  assert.equal(value("switchyard_eplb_hops_total"), 40);
  assert.equal(value("switchyard_eplb_hop_rows_total"), 100);
  assert.equal(value("switchyard_eplb_hop_seconds_total", { part: "wall" }), 0.3);
  assert.equal(value("switchyard_eplb_hop_seconds_total", { part: "exposed" }), 0.02);
  // (20 exposed + 5 send CPU) ms over 100 rows: 0.25 ms per remote row, measured.
  assert.equal(value("switchyard_eplb_remote_row_cost_seconds", { source: "measured" }), 0.00025);
  assert.deepEqual(findSamples(text, "switchyard_eplb_placement_info"), []);
  // A second scrape observes no duration twice.
  const again = parseExposition(await registry.metrics());
  assert.equal(findSamples(again, "switchyard_eplb_rebalance_duration_seconds_count")[0]!.value, 1);
});

Deno.test({
  name: "eplbMetrics() passes promtool check metrics",
  ignore: !(await promtoolAvailable()),
  async fn() {
    const registry = new Registry();
    eplbMetrics(registry, eplbSource());
    assert.deepEqual(await promtoolCheckMetrics(await registry.metrics()), { code: 0, output: "" });
  },
});
