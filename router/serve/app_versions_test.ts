/** @module The router's versioned OIP v2 routes: metadata, readiness and infer per version. */
import assert from "node:assert/strict";
import { fakeMetadata } from "../../tests/_support/router/fake_backend.ts";
import { createHarness } from "../../tests/_support/router/harness.ts";
import { tinyRequest } from "../../tests/_support/router/requests.ts";

Deno.test("GET /v2/models/{m}/versions/{v} and …/ready answer for a served version, 404 otherwise", async () => {
  const h = await createHarness();
  try {
    const metadata = await h.app.request("/v2/models/tiny/versions/1");
    assert.equal(metadata.status, 200);
    assert.deepEqual(await metadata.json(), fakeMetadata("tiny", 4));
    const ready = await h.app.request("/v2/models/tiny/versions/1/ready");
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { name: "tiny", ready: true });
    const missing = await h.app.request("/v2/models/tiny/versions/7");
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), {
      error: 'Cannot find model "tiny" version "7": the pool serves "1"',
      code: "not_found",
    });
    assert.equal((await h.app.request("/v2/models/tiny/versions/7/ready")).status, 404);
    assert.equal((await h.app.request("/v2/models/nope/versions/1")).status, 404);
  } finally {
    await h.close();
  }
});

Deno.test("POST /v2/models/{m}/versions/{v}/infer forwards like the unversioned route", async () => {
  const h = await createHarness();
  try {
    const request = tinyRequest();
    const res = await h.app.request("/v2/models/tiny/versions/1/infer", {
      method: "POST",
      body: request.body,
      headers: request.headers,
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const received = h.backends.flatMap((b) => b.inferences());
    assert.equal(received.length, 1);
    assert.equal(received[0]!.path, "/v2/models/tiny/infer");
    assert.deepEqual(received[0]!.body, request.body);
    const wrong = await h.app.request("/v2/models/tiny/versions/2/infer", {
      method: "POST",
      body: request.body,
      headers: request.headers,
    });
    assert.equal(wrong.status, 404);
    assert.match((await wrong.json()).error, /version "2": the pool serves "1"/);
    assert.equal(
      h.backends.flatMap((b) => b.inferences()).length,
      1,
      "a wrong version is not forwarded",
    );
  } finally {
    await h.close();
  }
});

Deno.test("model metadata lists every version the pool's backends serve", async () => {
  const h = await createHarness({ discover: false });
  try {
    // The pool re-reads a backend's metadata when it comes back up.
    h.backends[1]!.versions = ["2"];
    h.backends[1]!.mode = "unready";
    await h.pool.checkNow();
    h.backends[1]!.mode = "ok";
    // Re-admission takes router.outlier.readmit_after (2) passing checks.
    await h.pool.checkNow();
    await h.pool.checkNow();
    const res = await h.app.request("/v2/models/tiny");
    assert.deepEqual((await res.json()).versions, ["1", "2"]);
    assert.equal((await h.app.request("/v2/models/tiny/versions/2/ready")).status, 200);
  } finally {
    await h.close();
  }
});
