/**
 * The `node` front in-process: it hands the handler what `Deno.serve` would (request,
 * body, remote address), streams answers and cancels them when the client leaves, sends
 * each cookie, answers the error handler's response when the handler throws, reports a
 * taken port as `Deno.errors.AddrInUse`, and shuts down with idle connections open.
 */
import assert from "node:assert/strict";
import { serveNode } from "./node_server.ts";

const options = {
  hostname: "127.0.0.1",
  port: 0,
  maxConnections: 64,
  headerTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  onError: () => new Response("handler failed", { status: 500 }),
};

Deno.test("node front: request, body, remote address, cookies, errors", async () => {
  const front = await serveNode(options, async (request, info) => {
    const path = new URL(request.url).pathname;
    if (path === "/throw") throw new Error("boom");
    if (path === "/cookies") {
      const headers = new Headers();
      headers.append("set-cookie", "a=1");
      headers.append("set-cookie", "b=2");
      return new Response(null, { status: 204, headers });
    }
    const text = request.body ? await request.text() : "";
    return Response.json({
      method: request.method,
      path,
      query: new URL(request.url).search,
      header: request.headers.get("x-test"),
      text,
      remote: info.remoteAddr.hostname,
    });
  });
  const base = `http://127.0.0.1:${front.addr.port}`;
  try {
    const echo = await fetch(`${base}/echo?x=1`, {
      method: "POST",
      headers: { "x-test": "yes" },
      body: "x".repeat(200_000),
    });
    const json = await echo.json();
    assert.deepEqual({ ...json, text: json.text.length }, {
      method: "POST",
      path: "/echo",
      query: "?x=1",
      header: "yes",
      text: 200_000,
      remote: "127.0.0.1",
    });
    const get = await (await fetch(`${base}/g`)).json();
    assert.equal(get.method, "GET");
    const cookies = await fetch(`${base}/cookies`);
    assert.equal(cookies.status, 204);
    assert.deepEqual(cookies.headers.getSetCookie(), ["a=1", "b=2"]);
    const failed = await fetch(`${base}/throw`);
    assert.equal(failed.status, 500);
    assert.equal(await failed.text(), "handler failed");
  } finally {
    await front.shutdown();
  }
});

Deno.test("node front: a streamed answer arrives as produced and is cancelled when the client leaves", async () => {
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => cancelled = resolve);
  let timer: ReturnType<typeof setInterval> | undefined;
  const front = await serveNode(options, () => {
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        timer = setInterval(
          () => controller.enqueue(new TextEncoder().encode(`data: ${n++}\n\n`)),
          20,
        );
      },
      cancel() {
        clearInterval(timer);
        cancelled();
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  });
  try {
    const response = await fetch(`http://127.0.0.1:${front.addr.port}/stream`);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^data: 0/);
    await reader.cancel();
    await cancel;
  } finally {
    clearInterval(timer);
    await front.shutdown();
  }
});

Deno.test("node front: a taken port is AddrInUse; shutdown closes idle connections", async () => {
  const front = await serveNode(options, () => new Response("ok"));
  try {
    await assert.rejects(
      serveNode({ ...options, port: front.addr.port }, () => new Response("x")),
      Deno.errors.AddrInUse,
    );
    const idle = await Deno.connect({ hostname: "127.0.0.1", port: front.addr.port });
    assert.equal(await (await fetch(`http://127.0.0.1:${front.addr.port}/`)).text(), "ok");
    await front.shutdown();
    assert.equal(await idle.read(new Uint8Array(8)).catch(() => null), null);
    idle.close();
  } finally {
    await front.shutdown();
  }
});

Deno.test("node front: a silent connection and an idle keep-alive one are closed and counted", async () => {
  const front = await serveNode(
    { ...options, headerTimeoutMs: 200, idleTimeoutMs: 300 },
    () => new Response("ok"),
  );
  const port = front.addr.port;
  try {
    const silent = await Deno.connect({ hostname: "127.0.0.1", port });
    const kept = await Deno.connect({ hostname: "127.0.0.1", port });
    await kept.write(new TextEncoder().encode("GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    const readAll = async (conn: Deno.Conn) => {
      const buffer = new Uint8Array(4096);
      let text = "";
      for (;;) {
        const n = await conn.read(buffer).catch(() => null);
        if (n === null) return text;
        text += new TextDecoder().decode(buffer.subarray(0, n));
      }
    };
    // Both reads end only when the server closes the connection.
    assert.equal(await readAll(silent), "");
    assert.match(await readAll(kept), /^HTTP\/1\.1 200/);
    silent.close();
    kept.close();
    const counts = front.counts();
    assert.equal(counts.headerTimeouts, 1);
    assert.equal(counts.idleTimeouts, 1);
    assert.equal(counts.open, 0);
  } finally {
    await front.shutdown();
  }
});

Deno.test("node front: beyond maxConnections a connection gets 503 + Retry-After and is closed", async () => {
  let served = 0;
  const front = await serveNode({ ...options, maxConnections: 2 }, () => {
    served++;
    return new Response("ok");
  });
  const port = front.addr.port;
  const conns: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 2; i++) conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    // A client beyond the cap that sends its request anyway reads the 503 to the end.
    const refused = await fetch(`http://127.0.0.1:${port}/x`, { method: "POST", body: "{}" });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.match((await refused.json()).error, /router\.max_connections/);
    assert.equal(front.counts().refused, 1);
    assert.equal(front.counts().open, 2);
    assert.equal(served, 0, "a refused connection's request is not served");
  } finally {
    for (const conn of conns) conn.close();
    await front.shutdown();
  }
});

Deno.test("node front: an early answer keeps a prompt client's connection; a body that never comes closes it", async () => {
  // Answers at once without reading the body, as admission's 429 does.
  const front = await serveNode(
    { ...options, headerTimeoutMs: 300 },
    () => new Response("busy", { status: 429, headers: { "retry-after": "1" } }),
  );
  const port = front.addr.port;
  const encode = (text: string) => new TextEncoder().encode(text);
  const readUntil = async (conn: Deno.Conn, answers: number) => {
    const buffer = new Uint8Array(4096);
    let text = "";
    while ((text.match(/HTTP\/1\.1 /g) ?? []).length < answers || !text.endsWith("busy")) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) return { text, closed: true };
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return { text, closed: false };
  };
  try {
    // The body follows the answer: the connection stays and serves the next request.
    const prompt = await Deno.connect({ hostname: "127.0.0.1", port });
    await prompt.write(encode("POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n"));
    const first = await readUntil(prompt, 1);
    assert.match(first.text, /^HTTP\/1\.1 429/);
    assert.doesNotMatch(first.text, /connection: close/i);
    await prompt.write(
      encode("0123456789POST /b HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nab"),
    );
    const second = await readUntil(prompt, 1);
    assert.equal(second.closed, false);
    assert.match(second.text, /^HTTP\/1\.1 429/);
    prompt.close();
    assert.ok(front.counts().drained >= 1);

    // The declared body never comes: closed once the header timeout passes after the answer.
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    await stalled.write(encode("POST /c HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\n01"));
    const stalledRead = await readUntil(stalled, 2);
    assert.equal(stalledRead.closed, true);
    assert.match(stalledRead.text, /^HTTP\/1\.1 429/);
    stalled.close();

    // A body of unknown length is not waited for: the answer says close, and it closes.
    const chunked = await Deno.connect({ hostname: "127.0.0.1", port });
    await chunked.write(
      encode("POST /d HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel"),
    );
    const chunkedRead = await readUntil(chunked, 2);
    assert.equal(chunkedRead.closed, true);
    assert.match(chunkedRead.text, /connection: close/i);
    chunked.close();
    assert.equal(front.counts().closedUnread, 2);
  } finally {
    await front.shutdown();
  }
});
