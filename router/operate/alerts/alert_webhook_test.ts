import assert from "node:assert/strict";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import { systemClock } from "../../runtime/clock.ts";
import { AlertManager } from "./alert_manager.ts";
import type { Alert } from "./alert_types.ts";
import { postAlertWebhook } from "./alert_webhook.ts";
import { backendView } from "../../../tests/_support/router/views.ts";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";

const ALERT: Alert = {
  id: "backend_down:127.0.0.1:9002",
  kind: "backend_down",
  subject: "backend-2",
  state: "firing",
  firedAt: 1000,
  resolvedAt: undefined,
  value: 0,
  threshold: 1,
  message: "Backend backend-2 (127.0.0.1:9002) is down: unhealthy (refused)",
};

/** A receiver that answers `statuses` in turn (then 200) and records each body. */
function receiver(...statuses: number[]) {
  const bodies: unknown[] = [];
  const keys: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    keys.push(`${r.headers.get("idempotency-key")} #${r.headers.get("x-switchyard-attempt")}`);
    bodies.push(await r.json());
    return new Response(null, { status: statuses[bodies.length - 1] ?? 200 });
  });
  return {
    bodies,
    keys,
    server,
    url: `http://127.0.0.1:${server.addr.port}/hooks/secret-path?k=1`,
  };
}

Deno.test("postAlertWebhook() POSTs the alert as JSON and retries once after a failure", async () => {
  const { bodies, keys, server, url } = receiver(503);
  const logger = new MemoryLogger();
  try {
    const ok = await postAlertWebhook(ALERT, {
      url,
      fetch,
      clock: systemClock,
      logger,
      retryDelayMs: 1,
    });
    assert.equal(ok, true);
    assert.equal(bodies.length, 2);
    // The retry names the same transition: receivers drop repeats of a key.
    assert.deepEqual(keys, [
      "backend_down:127.0.0.1:9002@1000:firing #1",
      "backend_down:127.0.0.1:9002@1000:firing #2",
    ]);
    assert.deepEqual(bodies[1], {
      source: "switchyard",
      event: "alert",
      alert: {
        id: "backend_down:127.0.0.1:9002",
        kind: "backend_down",
        subject: "backend-2",
        state: "firing",
        fired_at: 1000,
        resolved_at: null,
        value: 0,
        threshold: 1,
        message: ALERT.message,
      },
    });
    assert.equal(logger.records.length, 0);
  } finally {
    await server.shutdown();
  }
});

Deno.test("postAlertWebhook() gives up after two failures, logs the origin only, never throws", async () => {
  const { bodies, server, url } = receiver(500, 500);
  const logger = new MemoryLogger();
  try {
    const options = { url, fetch, clock: systemClock, logger, retryDelayMs: 1 };
    assert.equal(await postAlertWebhook(ALERT, options), false);
    assert.equal(bodies.length, 2, "one retry, no more");
    const [line] = logger.find("alert webhook failed");
    assert.equal(line?.fields["reason"], "answered 500");
    assert.equal(line?.fields["webhook"], new URL(url).origin, "no path or query in logs");
    assert.equal(line?.fields["event"], "alert");
  } finally {
    await server.shutdown();
  }
  // Nobody listening any more: connection refused, still no throw.
  const refused = new MemoryLogger();
  assert.equal(
    await postAlertWebhook(ALERT, {
      url,
      fetch,
      clock: systemClock,
      logger: refused,
      retryDelayMs: 1,
    }),
    false,
  );
  assert.equal(refused.find("alert webhook failed").length, 1);
});

Deno.test("postAlertWebhook() limits each attempt with timeoutMs", async () => {
  let release!: () => void;
  const hang = new Promise<void>((resolve) => release = resolve);
  let calls = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    calls++;
    await hang;
    return new Response(null);
  });
  const logger = new MemoryLogger();
  try {
    const ok = await postAlertWebhook(ALERT, {
      url: `http://127.0.0.1:${server.addr.port}/`,
      fetch,
      clock: systemClock,
      logger,
      timeoutMs: 50,
      retryDelayMs: 1,
    });
    assert.equal(ok, false);
    assert.equal(calls, 2);
    assert.equal(
      logger.find("alert webhook failed")[0]?.fields["reason"],
      "no answer within 50 ms",
    );
  } finally {
    release();
    await server.shutdown();
  }
});

Deno.test("AlertManager POSTs fire and resolve to the webhook without blocking the round", async () => {
  const { bodies, server, url } = receiver();
  let healthy = false;
  const manager = new AlertManager({
    settings: { expertLoadThreshold: 0.8, balanceThreshold: 0.75, raiseAfter: 1, clearAfter: 1 },
    views: () => [{ ...backendView("127.0.0.1:9002"), name: "backend-2", healthy }],
    clock: systemClock,
    logger: new MemoryLogger(),
    webhook: { url, fetch },
  });
  try {
    manager.onRound(poolLoadOf());
    assert.equal(bodies.length, 0, "the round returned before the POST");
    healthy = true;
    await manager.settled();
    manager.onRound(poolLoadOf());
    // Healthy again but no load report from it yet: still down. A fresh report clears it.
    assert.equal(manager.active().length, 1);
    manager.onRound(poolLoadOf(oneSecondSample("127.0.0.1:9002", [[1, 1, 1, 1], [1, 1, 1, 1]])));
    assert.equal(manager.active().length, 0);
    await manager.settled();
    const states = bodies.map((b) => (b as { alert: { state: string; subject: string } }).alert);
    assert.deepEqual(states.map((a) => [a.subject, a.state]), [
      ["backend-2", "firing"],
      ["backend-2", "resolved"],
    ]);
  } finally {
    await server.shutdown();
  }
});
