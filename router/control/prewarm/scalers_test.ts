import assert from "node:assert/strict";
import { systemClock } from "../../runtime/clock.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { LocalScaler } from "./local_scaler.ts";
import type { ScalingRecommendation } from "./prewarm_types.ts";
import { AdvisoryScaler, type WebhookBody, WebhookScaler } from "./scalers.ts";

const REC: ScalingRecommendation = {
  model: "m",
  current: 2,
  target: 4,
  predictedTokensPerS: 500,
  capacityPerBackend: 200,
  threshold: 0.8,
  reason: "test",
};

Deno.test("AdvisoryScaler reports the change and does nothing else", async () => {
  const scaler = new AdvisoryScaler();
  assert.deepEqual(await scaler.publish(REC), {
    scaler: "advisory",
    status: "reported",
    detail: "2 → 4 backends",
  });
  assert.equal((await scaler.publish({ ...REC, target: 2 })).detail, "no change");
});

Deno.test("WebhookScaler POSTs the recommendation as JSON to a real server", async () => {
  const received: { method: string; type: string | null; body: WebhookBody }[] = [];
  let status = 202;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      received.push({
        method: req.method,
        type: req.headers.get("content-type"),
        body: await req.json(),
      });
      return new Response(null, { status });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/scale`;
  const scaler = new WebhookScaler({ url, fetch, clock: systemClock });
  assert.deepEqual(await scaler.publish(REC), {
    scaler: "webhook",
    status: "sent",
    detail: "HTTP 202",
  });
  assert.deepEqual(received, [{
    method: "POST",
    type: "application/json",
    body: { source: "switchyard-prewarm", recommendation: REC },
  }]);
  status = 500;
  const failed = await scaler.publish(REC);
  assert.equal(failed.status, "failed");
  assert.equal(failed.detail, "webhook: HTTP 500");
});

Deno.test("WebhookScaler never throws: refused connections and timeouts are outcomes", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const refused = await new WebhookScaler({
    url: `http://127.0.0.1:${port}/`,
    fetch,
    clock: systemClock,
  }).publish(REC);
  assert.equal(refused.status, "failed");
  assert.match(refused.detail!, /webhook: connection failed/);
  const clock = new ManualClock();
  const hanging = new WebhookScaler({
    url: "http://hook.invalid/",
    clock,
    timeoutMs: 1000,
    fetch: (_input, init) =>
      new Promise((_, reject) =>
        init?.signal?.addEventListener("abort", () => reject(new Error("aborted")))
      ),
  }).publish(REC);
  await clock.advance(1000);
  assert.deepEqual(await hanging, {
    scaler: "webhook",
    status: "failed",
    detail: "webhook: timed out after 1000 ms",
  });
});

Deno.test("LocalScaler starts only the missing backends and reports their URLs", async () => {
  const launched: number[] = [];
  const scaler = new LocalScaler((index) => {
    launched.push(index);
    return Promise.resolve(`http://127.0.0.1:${9100 + index}`);
  });
  const first = await scaler.publish(REC); // 2 → 4
  assert.equal(first.status, "started");
  assert.deepEqual(first.started, ["http://127.0.0.1:9100", "http://127.0.0.1:9101"]);
  const again = await scaler.publish(REC); // 2 + 2 started ≥ 4
  assert.equal(again.status, "unchanged");
  assert.deepEqual(launched, [0, 1]);
  const failing = new LocalScaler(() => Promise.reject(new Error("port in use")));
  const failed = await failing.publish(REC);
  assert.equal(failed.status, "failed");
  assert.match(failed.detail!, /started 0 of 2 backends: port in use/);
});

Deno.test("LocalScaler hands started backends to the pool, which then counts them", async () => {
  const joined: string[] = [];
  const scaler = new LocalScaler(
    (index) => Promise.resolve(`http://127.0.0.1:${9200 + index}`),
    (url) => joined.push(url),
  );
  const first = await scaler.publish(REC); // pool 2 → target 4
  assert.equal(first.status, "started");
  assert.match(first.detail!, /added them to the pool/);
  assert.deepEqual(joined, ["http://127.0.0.1:9200", "http://127.0.0.1:9201"]);
  // The pool now holds 4: nothing more to start.
  const again = await scaler.publish({ ...REC, current: 4 });
  assert.equal(again.status, "unchanged");
  assert.equal(joined.length, 2);
});
