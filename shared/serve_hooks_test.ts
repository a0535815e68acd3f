import assert from "node:assert/strict";
import { closeWhenAsked, closingResponse, serveErrorHandler } from "./serve_hooks.ts";
import { readUntilClosed, sendPartial } from "../tools/net/raw_http.ts";
import { createJsonLogger } from "./logger.ts";

Deno.test("closingResponse() keeps status, headers and bytes, then errors", async () => {
  const original = new Response('{"error":"x"}', {
    status: 413,
    headers: { "content-type": "application/json", connection: "close" },
  });
  const closing = closingResponse(original);
  assert.equal(closing.status, 413);
  assert.equal(closing.headers.get("content-type"), "application/json");
  const reader = closing.body!.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), '{"error":"x"}');
  await assert.rejects(() => reader.read(), { name: "CloseConnection" });
});

Deno.test("closeWhenAsked() closes the connection of a Connection: close answer, not others", async () => {
  const lines: string[] = [];
  const logger = createJsonLogger({ level: "debug", write: (line) => lines.push(line) });
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {}, onError: serveErrorHandler(logger) },
    closeWhenAsked(async (request: Request) => {
      const reader = request.body!.getReader();
      await reader.read();
      await reader.cancel();
      const close = new URL(request.url).pathname === "/close";
      return new Response("no", { status: 413, headers: close ? { connection: "close" } : {} });
    }),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const closed = await readUntilClosed(
      await sendPartial({ url: `${url}/close`, contentLength: 1000, sent: "abc" }),
      30_000,
    );
    assert.match(closed.text, /^HTTP\/1\.1 413 /);
    assert.match(closed.text, /no/);
    assert.equal(closed.closed, true);
    // Without the header the server keeps waiting for the rest of the body.
    const open = await readUntilClosed(
      await sendPartial({ url: `${url}/keep`, contentLength: 1000, sent: "abc" }),
      500,
    );
    assert.match(open.text, /^HTTP\/1\.1 413 /);
    assert.equal(open.closed, false);
    assert.deepEqual(lines, [], "a deliberate close logs nothing");
  } finally {
    await server.shutdown();
  }
});
