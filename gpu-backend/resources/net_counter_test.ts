import assert from "node:assert/strict";
import { countingHandler, NetCounter } from "./net_counter.ts";

Deno.test("countingHandler() counts declared request and response body lengths", async () => {
  const counter = new NetCounter();
  const handler = countingHandler(async (request: Request) => {
    const body = new Uint8Array(await request.arrayBuffer());
    return new Response(new Uint8Array(body.byteLength * 3), {
      headers: { "content-length": String(body.byteLength * 3) },
    });
  }, counter);
  const response = await handler(
    new Request("http://backend/v2/models/m/infer", {
      method: "POST",
      body: new Uint8Array(100),
      headers: { "content-length": "100" },
    }),
    undefined,
  );
  assert.equal((await response.arrayBuffer()).byteLength, 300);
  assert.equal(counter.rxBytes, 100);
  assert.equal(counter.txBytes, 300);
});

Deno.test("countingHandler() counts streamed bodies as their bytes pass", async () => {
  const counter = new NetCounter();
  const handler = countingHandler(async (request: Request) => {
    const text = await request.text();
    return new Response(`echo:${text}`);
  }, counter);
  const chunks = ["abc", "defg"];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  const response = await handler(new Request("http://b/", { method: "POST", body: stream }), 0);
  assert.equal(await response.text(), "echo:abcdefg");
  assert.equal(counter.rxBytes, 7);
  assert.equal(counter.txBytes, 12);
});

Deno.test("countingHandler() leaves bodiless answers and status alone", async () => {
  const counter = new NetCounter();
  const handler = countingHandler(
    () => new Response(null, { status: 204, headers: { "x-a": "1" } }),
    counter,
  );
  const response = await handler(new Request("http://b/"), 0);
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("x-a"), "1");
  assert.equal(counter.rxBytes + counter.txBytes, 0);
  const json = countingHandler(() => Response.json({ ok: true }, { status: 201 }), counter);
  const created = await json(new Request("http://b/"), 0);
  assert.equal(created.status, 201);
  assert.deepEqual(await created.json(), { ok: true });
  assert.equal(counter.txBytes, 11);
});
