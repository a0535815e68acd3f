import assert from "node:assert/strict";
import {
  PostableAlertsSchema,
  WebhookV4Schema,
} from "../../../tests/_support/alertmanager_schema.ts";
import type { Alert } from "./alert_types.ts";
import {
  alertName,
  fingerprint,
  postableAlerts,
  webhookV4,
  ZERO_TIME,
} from "./alertmanager_payload.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const CONTEXT = { externalUrl: "http://localhost:8080/dashboard" };

function alert(id: string, kind: Alert["kind"], firedAt: number, resolvedAt?: number): Alert {
  return {
    id,
    kind,
    subject: id.split(":").slice(1).join(" "),
    state: resolvedAt === undefined ? "firing" : "resolved",
    firedAt,
    resolvedAt,
    value: 0.91,
    threshold: 0.8,
    message: `${id} message`,
  };
}

Deno.test("fingerprint() is Prometheus' label-set fingerprint", () => {
  // Read back from a real Alertmanager 0.25 (GET /api/v2/alerts) for these labels.
  assert.equal(
    fingerprint({
      alertname: "ProbeFailure",
      instance: "https://server.example.org",
      job: "http_checks",
      monitor: "master",
      severity: "critical",
    }),
    "fe986f5dcb3e6510",
  );
  assert.equal(alertName("expert_hot"), "SwitchyardExpertHot");
});

Deno.test("webhookV4() groups one evaluation by alertname and passes the v4 schema", () => {
  const hot1 = alert("expert_hot:backend-1:L0/E3", "expert_hot", T0);
  const hot2 = alert("expert_hot:backend-1:L0/E5", "expert_hot", T0 + 1000);
  const downGone = alert("backend_down:backend-2", "backend_down", T0 - 5000, T0 + 2000);
  const bodies = webhookV4([hot1, hot2], [hot2, downGone], CONTEXT);
  assert.equal(bodies.length, 2, "one body per alertname that changed");
  for (const body of bodies) WebhookV4Schema.parse(body);
  const [down, hot] = bodies;
  assert.equal(down!.groupKey, '{}:{alertname="SwitchyardBackendDown"}');
  assert.equal(down!.status, "resolved");
  assert.equal(down!.alerts[0]!.endsAt, new Date(T0 + 2000).toISOString());
  assert.equal(down!.commonLabels["severity"], "critical");
  assert.equal(hot!.status, "firing");
  assert.deepEqual(hot!.alerts.map((a) => a.labels["alert_id"]), [hot1.id, hot2.id]);
  assert.equal(hot!.alerts[0]!.endsAt, ZERO_TIME);
  assert.deepEqual(hot!.groupLabels, { alertname: "SwitchyardExpertHot" });
  assert.equal(hot!.commonLabels["alert_id"], undefined, "differs between the two");
  assert.equal(hot!.commonLabels["severity"], "warning");
  assert.equal(hot!.alerts[0]!.fingerprint, fingerprint(hot!.alerts[0]!.labels));
  assert.deepEqual(webhookV4([hot1], [], CONTEXT), [], "nothing changed, nothing sent");
});

Deno.test("postableAlerts() passes the v2 schema: firing without endsAt, resolved with it", () => {
  const body = postableAlerts([
    alert("expert_hot:backend-1:L0/E3", "expert_hot", T0),
    alert("backend_down:backend-2", "backend_down", T0, T0 + 1000),
  ], CONTEXT);
  PostableAlertsSchema.parse(body);
  assert.equal(body[0]!.endsAt, undefined);
  assert.equal(body[1]!.endsAt, new Date(T0 + 1000).toISOString());
});
