import assert from "node:assert/strict";
import { createHarness } from "./testing/harness.ts";
import { postInfer, tinyRequest } from "./testing/requests.ts";

Deno.test("beyond router.admission.max_in_flight the router answers 429 with Retry-After at once", async () => {
  const h = await createHarness({
    config: { router: { admission: { max_in_flight: 2 }, request_timeout: "5s" } },
  });
  for (const backend of h.backends) backend.mode = "hang";
  const held = [postInfer(h, tinyRequest()), postInfer(h, tinyRequest())];
  await h.clock.settle();
  const shed = [];
  for (let i = 0; i < 5; i++) shed.push(await postInfer(h, tinyRequest()));
  for (const res of shed) {
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "1");
    const body = await res.json();
    assert.equal(body.code, "too_many_requests");
    assert.match(body.error, /router\.admission\.max_in_flight/);
  }
  // One log line for the five, with the count (a flood of sheds is not a flood of lines).
  const lines = h.logger.find("requests shed");
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.fields["reason"], "router_full");
  // The held requests time out; their slots are released and the next one is admitted.
  for (const backend of h.backends) backend.mode = "ok";
  await h.clock.advance(5000);
  for (const res of await Promise.all(held)) await res.body?.cancel();
  const after = await postInfer(h, tinyRequest());
  assert.equal(after.status, 200);
  await after.body?.cancel();
  await h.close();
});

Deno.test("with every backend at router.admission.max_in_flight_per_backend: 429, not 503", async () => {
  const h = await createHarness({
    config: {
      router: { admission: { max_in_flight_per_backend: 1 }, request_timeout: "5s" },
    },
  });
  for (const backend of h.backends) backend.mode = "hang";
  const held = [postInfer(h, tinyRequest()), postInfer(h, tinyRequest())];
  await h.clock.settle();
  assert.deepEqual(h.pool.views().map((view) => view.inFlight), [1, 1]);
  const res = await postInfer(h, tinyRequest());
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.match((await res.json()).error, /max_in_flight_per_backend/);
  assert.equal(h.logger.find("requests shed")[0]?.fields["reason"], "backends_full");
  await h.clock.advance(5000);
  for (const response of await Promise.all(held)) await response.body?.cancel();
  await h.close();
});
