import assert from "node:assert/strict";
import { createHarness } from "../../tests/_support/router/harness.ts";
import { postInfer, tinyRequest } from "../../tests/_support/router/requests.ts";

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

Deno.test("a timed-out request whose retry finds the other backend full gets 429 with Retry-After, not 504", async () => {
  const h = await createHarness({
    config: {
      router: {
        admission: { max_in_flight_per_backend: 1 },
        request_timeout: "30s",
        retry: { try_timeout: "2s" },
      },
    },
  });
  for (const backend of h.backends) backend.mode = "hang";
  const first = postInfer(h, tinyRequest());
  await h.clock.settle();
  const second = postInfer(h, tinyRequest());
  await h.clock.settle();
  assert.deepEqual(h.pool.views().map((view) => view.inFlight), [1, 1]);
  // The first times out while the second holds the other backend's only slot.
  await h.clock.advance(2_000);
  const res = await first;
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.match((await res.json()).error, /max_in_flight_per_backend/);
  await h.clock.advance(30_000);
  await (await second).body?.cancel();
  await h.close();
});

/** A request whose body sends its first bytes and then waits until `finish()`. */
function slowRequest(h: Awaited<ReturnType<typeof createHarness>>) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(new TextEncoder().encode('{"inputs":['));
    },
  });
  const response = Promise.resolve(h.app.request("/v2/models/tiny/infer", {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
  }));
  return {
    response,
    finish: () => {
      try {
        controller.close();
      } catch { /* the router cancelled the read already */ }
    },
  };
}

Deno.test("slow bodies hold body-reader slots, not in-flight slots; when all are taken 429, then the oldest is evicted past the grace", async () => {
  const h = await createHarness({
    config: {
      router: { admission: { max_in_flight: 2, max_body_readers: 4, reader_grace: "1s" } },
      limits: { body_timeout: "60s" },
    },
  });
  // Three slow bodies: more than max_in_flight, yet a whole body is admitted.
  const slow = [slowRequest(h), slowRequest(h), slowRequest(h)];
  await h.clock.settle();
  const ok = await postInfer(h, tinyRequest());
  assert.equal(ok.status, 200, await ok.clone().text());
  await ok.body?.cancel();
  // A fourth takes the last reader slot; the next request is shed with 429 + Retry-After.
  slow.push(slowRequest(h));
  await h.clock.settle();
  const shed = await postInfer(h, tinyRequest());
  assert.equal(shed.status, 429);
  assert.equal(shed.headers.get("retry-after"), "1");
  assert.match((await shed.json()).error, /router\.admission\.max_body_readers/);
  assert.equal(h.logger.find("requests shed")[0]?.fields["reason"], "readers_full");
  // Past the grace, a new request takes the oldest slow body's slot: that one gets 408.
  h.clock.stall(1000);
  const evicting = await postInfer(h, tinyRequest());
  assert.equal(evicting.status, 200);
  await evicting.body?.cancel();
  const evicted = await slow[0]!.response;
  assert.equal(evicted.status, 408);
  assert.equal(evicted.headers.get("connection"), "close");
  assert.match((await evicted.json()).error, /a newer request took its slot/);
  // The rest end when their clients finish the body (a truncated body: 400, not 5xx).
  for (const s of slow.slice(1)) {
    s.finish();
    const res = await s.response;
    assert.equal(res.status, 400);
    await res.body?.cancel();
  }
  await h.close();
});
