import assert from "node:assert/strict";
import { decodeInferResponse } from "../../shared/infer_response_codec.ts";
import { createHarness, TEST_TOKEN } from "../../tests/_support/router/harness.ts";
import { postInfer, tinyRequest } from "../../tests/_support/router/requests.ts";
import { parseServerTiming } from "../../shared/server_timing.ts";

Deno.test("infer forwards a JSON body byte for byte with auth, request type and id headers", async () => {
  const h = await createHarness();
  const request = tinyRequest(3, { requestType: "chat" });
  const res = await postInfer(h, request, { headers: { "x-request-id": "req-42" } });
  assert.equal(res.status, 200);
  const [received] = h.backends[0]!.inferences();
  assert.ok(received);
  assert.deepEqual(received.body, request.body);
  assert.equal(received.path, "/v2/models/tiny/infer");
  assert.equal(received.headers.get("authorization"), `Bearer ${TEST_TOKEN}`);
  // The label sat only in parameters.request_type; the router still sends the header.
  assert.equal(received.headers.get("x-request-type"), "chat");
  assert.equal(received.headers.get("content-type"), "application/json");
  assert.equal(received.headers.get("x-request-id"), "req-42");
  assert.equal(received.headers.get("inference-header-content-length"), null);
  assert.equal(res.headers.get("x-request-id"), "req-42");
  assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9001");
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.equal(res.headers.get("x-backend-private"), null);
  const decoded = decodeInferResponse(new Uint8Array(await res.arrayBuffer()), null);
  assert.deepEqual([...decoded.tensors.get("output")!.data], [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
  ]);
  assert.deepEqual(decoded.head.parameters, { backend: "127.0.0.1:9001" });
  await h.close();
});

Deno.test("infer forwards a binary body unchanged and passes the binary answer through", async () => {
  const h = await createHarness();
  const request = tinyRequest(2, { binaryInput: true, binaryOutputs: true });
  const res = await postInfer(h, request, { headers: { "x-request-type": "batch" } });
  assert.equal(res.status, 200);
  const [received] = h.backends[0]!.inferences();
  assert.ok(received);
  assert.deepEqual(received.body, request.body);
  assert.equal(
    received.headers.get("inference-header-content-length"),
    request.headers["inference-header-content-length"],
  );
  assert.equal(received.headers.get("content-type"), "application/octet-stream");
  assert.equal(received.headers.get("x-request-type"), "batch");
  assert.equal(received.headers.get("authorization"), `Bearer ${TEST_TOKEN}`);
  assert.equal(res.headers.get("content-type"), "application/octet-stream");
  const headerLength = Number(res.headers.get("inference-header-content-length"));
  assert.ok(headerLength > 0);
  const decoded = decodeInferResponse(new Uint8Array(await res.arrayBuffer()), headerLength);
  assert.deepEqual([...decoded.tensors.get("output")!.data], [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(decoded.head.outputs[0]!.parameters?.["binary_data_size"], 32);
  await h.close();
});

Deno.test("infer sends no authorization header when no internal token is configured", async () => {
  const h = await createHarness({ withToken: false });
  const res = await postInfer(h, tinyRequest(), { headers: { authorization: "Bearer client" } });
  assert.equal(res.status, 200);
  assert.equal(h.backends[0]!.inferences()[0]!.headers.get("authorization"), null);
  await h.close();
});

Deno.test("infer generates an x-request-id when the client sends none or a bad one", async () => {
  const h = await createHarness();
  const plain = await postInfer(h, tinyRequest());
  const bad = await postInfer(h, tinyRequest(), {
    headers: { "x-request-id": "no spaces allowed" },
  });
  for (const res of [plain, bad]) {
    assert.match(res.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
    await res.body?.cancel();
  }
  assert.notEqual(plain.headers.get("x-request-id"), bad.headers.get("x-request-id"));
  await h.close();
});

Deno.test("x-switchyard-backend names the backend by the id it reports in ready details", async () => {
  const h = await createHarness({
    backendDetails: [{ backend_id: "backend-1" }, { backend_id: "backend-2" }],
  });
  const ids = [];
  for (let i = 0; i < 2; i++) {
    const res = await postInfer(h, tinyRequest());
    ids.push(res.headers.get("x-switchyard-backend"));
    await res.body?.cancel();
  }
  assert.deepEqual(ids, ["backend-1", "backend-2"]);
  assert.deepEqual(h.pool.views().map((view) => [view.id, view.name]), [
    ["127.0.0.1:9001", "backend-1"],
    ["127.0.0.1:9002", "backend-2"],
  ]);
  await h.close();
});

Deno.test("infer spreads requests over healthy backends", async () => {
  const h = await createHarness({ backends: 3 });
  const seen = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const res = await postInfer(h, tinyRequest());
    seen.add(res.headers.get("x-switchyard-backend")!);
    await res.body?.cancel();
  }
  assert.deepEqual([...seen].sort(), ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003"]);
  await h.close();
});

Deno.test("infer passes a backend's 503 and Retry-After through", async () => {
  const h = await createHarness({ backends: 1 });
  h.backends[0]!.mode = "overloaded";
  const res = await postInfer(h, tinyRequest());
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "2");
  assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9001");
  assert.deepEqual(await res.json(), {
    error: "Cannot run inference: queue full",
    code: "overloaded",
  });
  await h.close();
});

Deno.test("infer answers 404 naming an unknown model", async () => {
  const h = await createHarness();
  const res = await postInfer(h, tinyRequest(), { model: "nope" });
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.code, "not_found");
  assert.match(body.error, /"nope"/);
  assert.equal(h.backends[0]!.inferences().length, 0);
  await h.close();
});

Deno.test("infer answers 413 naming the limit, from content-length and from bytes read", async () => {
  const h = await createHarness({ config: { limits: { max_body_bytes: 64 } } });
  const request = tinyRequest(4);
  assert.ok(request.body.byteLength > 64);
  const declared = await postInfer(h, request, {
    headers: { "content-length": String(request.body.byteLength) },
  });
  const streamed = await postInfer(h, request);
  for (const res of [declared, streamed]) {
    assert.equal(res.status, 413);
    const body = await res.json();
    assert.equal(body.code, "payload_too_large");
    assert.match(body.error, /limits\.max_body_bytes \(64 bytes\)/);
  }
  assert.equal(h.backends[0]!.inferences().length, 0);
  await h.close();
});

Deno.test("infer answers 503 no_healthy_backend with Retry-After when every backend is down", async () => {
  const h = await createHarness();
  for (const backend of h.backends) backend.mode = "unready";
  await h.pool.checkNow();
  const res = await postInfer(h, tinyRequest());
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "1");
  const body = await res.json();
  assert.equal(body.code, "no_healthy_backend");
  assert.match(body.error, /"tiny"/);
  await h.close();
});

Deno.test("infer retries a connection failure on another backend; failures in a row eject the first", async () => {
  const h = await createHarness();
  h.backends[0]!.mode = "refuse";
  const request = tinyRequest();
  const res = await postInfer(h, request);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9002");
  assert.deepEqual(h.backends[1]!.inferences()[0]!.body, request.body);
  const [first, second] = h.pool.views();
  assert.equal(first!.healthy, true, "one refused connection is not an ejection");
  assert.match(first!.lastError ?? "", /Connection refused/);
  assert.equal(second!.healthy, true);
  assert.equal(second!.inFlight, 0);
  // Every request succeeds; router.outlier.eject_after (3) failures in a row eject it.
  for (let i = 0; i < 8 && h.pool.views()[0]!.healthy; i++) {
    const next = await postInfer(h, request);
    assert.equal(next.status, 200);
    await next.body?.cancel();
  }
  assert.equal(h.pool.views()[0]!.healthy, false);
  const down = h.logger.find("backend down")[0];
  assert.equal(down?.fields["backend"], "127.0.0.1:9001");
  assert.equal(down?.fields["ejected"], "connection");
  // The next request goes straight to the healthy backend.
  const next = await postInfer(h, request);
  assert.equal(next.headers.get("x-switchyard-backend"), "127.0.0.1:9002");
  await next.body?.cancel();
  await h.close();
});

Deno.test("infer retries an answer whose connection resets mid-body on another backend", async () => {
  // kill -9 between the answer's head and its body: a small answer is read whole inside
  // the attempt, so the reset is a connection failure to retry, not a broken 200.
  const h = await createHarness();
  h.backends[0]!.mode = "reset_mid_body";
  const request = tinyRequest();
  for (let i = 0; i < 4; i++) {
    const res = await postInfer(h, request);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9002");
    const decoded = decodeInferResponse(new Uint8Array(await res.arrayBuffer()), null);
    assert.equal(decoded.tensors.get("output")!.data.length, 8, "2 tokens × d_model 4");
  }
  assert.match(h.pool.views()[0]!.lastError ?? "", /Connection reset by peer/);
  await h.close();
});

Deno.test("infer answers 502 when the retry fails too, and 503 once every backend is ejected", async () => {
  const h = await createHarness();
  for (const backend of h.backends) backend.mode = "refuse";
  const res = await postInfer(h, tinyRequest());
  assert.equal(res.status, 502);
  const body = await res.json();
  assert.equal(body.code, "backend_error");
  assert.match(body.error, /"127\.0\.0\.1:9001" and "127\.0\.0\.1:9002" are unreachable/);
  let after = res;
  for (let i = 0; i < 4 && after.status !== 503; i++) {
    after = await postInfer(h, tinyRequest());
    assert.ok(after.status === 502 || after.status === 503, String(after.status));
    await after.body?.cancel();
  }
  assert.equal(after.status, 503, "dead backends (refused) are not tried even in panic");
  assert.equal(after.headers.get("retry-after"), "1");
  await h.close();
});

Deno.test("infer answers 503 when the only backend fails to connect", async () => {
  const h = await createHarness({ backends: 1 });
  h.backends[0]!.mode = "refuse";
  const res = await postInfer(h, tinyRequest());
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.match((await res.json()).error, /"127\.0\.0\.1:9001" is unreachable/);
  await h.close();
});

Deno.test("infer answers 504 after router.request_timeout and releases the in-flight slot", async () => {
  const h = await createHarness({
    backends: 1,
    config: { router: { request_timeout: "5s", retry: { try_timeout: "10s" } } },
  });
  h.backends[0]!.mode = "hang";
  const pending = postInfer(h, tinyRequest());
  await h.clock.settle();
  assert.equal(h.pool.views()[0]!.inFlight, 1);
  await h.clock.advance(4_999);
  let settled = false;
  pending.then(() => settled = true);
  await h.clock.settle();
  assert.equal(settled, false);
  await h.clock.advance(1);
  const res = await pending;
  assert.equal(res.status, 504);
  const body = await res.json();
  assert.equal(body.code, "timeout");
  assert.match(body.error, /router\.request_timeout \(5000 ms\)/);
  assert.equal(h.pool.views()[0]!.inFlight, 0);
  assert.equal(h.logger.find("backend unreachable").length, 0);
  await h.close();
});

Deno.test("infer retries on another backend after router.retry.try_timeout", async () => {
  const h = await createHarness({
    config: { router: { request_timeout: "30s", retry: { try_timeout: "2s" } } },
  });
  h.backends[0]!.mode = "hang";
  const pending = postInfer(h, tinyRequest());
  await h.clock.settle();
  assert.equal(h.pool.views()[0]!.inFlight, 1);
  await h.clock.advance(2_000);
  const res = await pending;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9002");
  await res.body?.cancel();
  assert.equal(h.pool.views()[0]!.inFlight, 0);
  assert.equal(h.logger.find("backend timed out")[0]?.fields["backend"], "127.0.0.1:9001");
  await h.close();
});

Deno.test("infer retries a request whose backend is ejected while it waits", async () => {
  const h = await createHarness({ config: { router: { retry: { try_timeout: "20s" } } } });
  h.backends[0]!.mode = "hang";
  const pending = postInfer(h, tinyRequest());
  await h.clock.settle();
  // Its probes time out (1 s each, one round per second after): the third ejects it.
  let settled = false;
  pending.then(() => settled = true);
  for (let i = 0; i < 10 && !settled; i++) await h.clock.advance(1000);
  const res = await pending;
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("x-switchyard-backend"), "127.0.0.1:9002");
  await res.body?.cancel();
  assert.equal(h.pool.views()[0]!.healthy, false);
  assert.equal(h.logger.find("backend ejected while a request waited").length, 1);
  await h.close();
});

Deno.test("the router survives a backend that throws", async () => {
  const h = await createHarness();
  h.backends[0]!.mode = "crash";
  const crashed = await postInfer(h, tinyRequest());
  assert.equal(crashed.status, 500);
  assert.equal(crashed.headers.get("x-switchyard-backend"), "127.0.0.1:9001");
  await crashed.body?.cancel();
  h.backends[1]!.mode = "explode";
  const exploded = await postInfer(h, tinyRequest());
  // Round-robin sends this one to :9002, whose fetch throws a plain Error: a connection
  // failure, retried on :9001 (which answers 500 again, as it still crashes).
  assert.equal(exploded.headers.get("x-switchyard-backend"), "127.0.0.1:9001");
  assert.match(h.pool.views()[1]!.lastError ?? "", /network stack exploded/);
  await exploded.body?.cancel();
  h.backends[0]!.mode = "ok";
  const ok = await postInfer(h, tinyRequest());
  assert.equal(ok.status, 200);
  await ok.body?.cancel();
  await h.close();
});

Deno.test("infer maps a backend refusing the internal token to 502, without leaking it", async () => {
  const strict = await createHarness();
  // Swap the router's config token for a wrong one: the fake requires TEST_TOKEN.
  strict.config.auth.internal_token = "wrong-token-0123456789";
  const res = await postInfer(strict, tinyRequest());
  assert.equal(res.status, 502);
  assert.equal((await res.json()).code, "backend_error");
  assert.equal(strict.logger.find("backend rejected the internal token").length, 1);
  assert.ok(!JSON.stringify(strict.logger.records).includes("wrong-token"));
  await strict.close();
});

Deno.test("infer passes the backend's Server-Timing on and adds the router's own, the network and the total", async () => {
  const h = await createHarness();
  const res = await postInfer(h, tinyRequest(2));
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  const metrics = parseServerTiming(res.headers.get("server-timing"));
  assert.deepEqual(metrics.map((m) => m.name), ["exec", "backend", "net", "router", "total"]);
  const ms = Object.fromEntries(metrics.map((m) => [m.name, m.ms]));
  assert.equal(ms.exec, 0.001);
  assert.equal(ms.backend, 0.002);
  // total = router + the answering attempt (network + backend), within rounding.
  assert.ok(Math.abs(ms.total! - (ms.router! + ms.net! + ms.backend!)) < 0.01, JSON.stringify(ms));
  assert.ok(ms.router! >= 0 && ms.net! >= 0);
  await h.close();
});
