import assert from "node:assert/strict";
import { ApiError } from "../../../shared/errors.ts";
import { parseHeaderLength } from "../../../shared/header_length.ts";
import { readLimitedBody } from "../../../shared/read_body.ts";
import { requestIdFrom } from "./request_id.ts";

function streamed(chunks: number[]): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const size of chunks) controller.enqueue(new Uint8Array(size).fill(7));
      controller.close();
    },
  });
  return new Request("http://x/", { method: "POST", body });
}

Deno.test("readLimitedBody() joins chunks up to the limit", async () => {
  const body = await readLimitedBody(streamed([3, 4, 3]), 10);
  assert.equal(body.byteLength, 10);
  assert.ok(body.every((byte) => byte === 7));
  assert.equal((await readLimitedBody(new Request("http://x/"), 10)).byteLength, 0);
});

Deno.test("readLimitedBody() rejects past the limit while reading, whatever content-length says", async () => {
  const request = streamed([6, 6]);
  request.headers.set("content-length", "3");
  await assert.rejects(readLimitedBody(request, 10), (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 413);
    assert.equal(
      error.message,
      "Cannot read request body: body exceeds limits.max_body_bytes (10 bytes)",
    );
    return true;
  });
});

Deno.test("readLimitedBody() rejects an announced content-length over the limit before reading", async () => {
  const request = new Request("http://x/", {
    method: "POST",
    body: "ab",
    headers: { "content-length": "11" },
  });
  await assert.rejects(
    readLimitedBody(request, 10),
    /content-length 11 exceeds limits\.max_body_bytes \(10 bytes\)/,
  );
});

Deno.test("parseHeaderLength() accepts integers and names the header otherwise", () => {
  assert.equal(parseHeaderLength(new Headers()), null);
  assert.equal(parseHeaderLength(new Headers({ "inference-header-content-length": " 42 " })), 42);
  for (const bad of ["-1", "1.5", "abc", "", "1e3", "99999999999999999999"]) {
    assert.throws(
      () => parseHeaderLength(new Headers({ "inference-header-content-length": bad })),
      (error: unknown) =>
        error instanceof ApiError && error.status === 400 &&
        error.message.includes(
          "header inference-header-content-length must be a non-negative integer",
        ),
      bad,
    );
  }
});

Deno.test("requestIdFrom() keeps sane client ids and replaces others", () => {
  assert.equal(requestIdFrom("abc-123_x.y:z"), "abc-123_x.y:z");
  for (const bad of [null, undefined, "", "has space", "x".repeat(129), 'quote"']) {
    assert.match(requestIdFrom(bad), /^[0-9a-f]{8}-[0-9a-f]{4}-/);
  }
});
