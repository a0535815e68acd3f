import assert from "node:assert/strict";
import { RouterMetrics } from "../metrics/router_metrics.ts";
import { findSamples, parseExposition } from "../../../shared/metrics/parse_exposition.ts";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { ObserverFailures } from "./observer_failures.ts";

const EVENT: InferenceEvent = {
  requestId: "r1",
  model: "m",
  requestType: undefined,
  rows: 1,
  backend: "b1",
  experts: undefined,
  batches: undefined,
  status: 200,
  ms: 3,
  at: 0,
};

Deno.test("ObserverFailures counts every failure by kind and logs only the first of each kind", () => {
  const logger = new MemoryLogger();
  const failures = new ObserverFailures(logger);
  let calls = 0;
  const broken = failures.guard("traffic_recorder", () => {
    calls++;
    throw new TypeError(`bucket ${calls} is undefined`);
  });
  const fine = failures.guard("metrics", () => {});
  for (let i = 0; i < 3; i++) {
    broken(EVENT);
    fine(EVENT);
  }
  failures.record("describe", new Error("bad trace header"));
  assert.equal(calls, 3);
  assert.deepEqual(
    failures.counts(),
    new Map([["traffic_recorder", 3], ["metrics", 0], ["describe", 1]]),
  );
  const lines = logger.find("request observer failed (logged once per kind, counted always)");
  assert.deepEqual(lines.map((line) => [line.fields["kind"], line.fields["error"]]), [
    ["traffic_recorder", "bucket 1 is undefined"],
    ["describe", "bad trace header"],
  ]);
  assert.match(String(lines[0]!.fields["stack"]), /TypeError: bucket 1 is undefined/);
});

Deno.test("observer failures are exported as switchyard_router_observer_errors_total{kind}", async () => {
  const failures = new ObserverFailures(new MemoryLogger());
  const request = failures.guard("request_log", () => {
    throw new Error("stdout closed");
  });
  failures.guard("metrics", () => {});
  failures.declare("describe");
  request(EVENT);
  request(EVENT);
  const metrics = new RouterMetrics({
    version: "1",
    views: () => [],
    knownModel: () => true,
    load: () => ({
      at: 0,
      backends: [],
      models: [],
      pool: { reporting: 0, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
    }),
    observerErrors: () => failures.counts(),
  });
  const text = parseExposition(await metrics.render());
  const value = (kind: string) =>
    findSamples(text, "switchyard_router_observer_errors_total", { kind })[0]?.value;
  assert.equal(value("request_log"), 2);
  assert.equal(value("metrics"), 0);
  assert.equal(value("describe"), 0);
  assert.equal(text.types.get("switchyard_router_observer_errors_total"), "counter");
});
