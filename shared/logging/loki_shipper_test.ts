import assert from "node:assert/strict";
import { resolveConfig } from "../config.ts";
import { lokiEntryFromLine, lokiPushBody } from "./loki_push.ts";
import { LokiShipper } from "./loki_shipper.ts";
import { createServiceLogger } from "./service_logger.ts";

interface Received {
  tenant: string | null;
  streams: { stream: Record<string, string>; values: [string, string][] }[];
}

/**
 * A test server implementing Loki's documented push endpoint: `POST /loki/api/v1/push`
 * with a JSON `{"streams":[{"stream":{…},"values":[["<ns>","<line>"]]}]}` body, 204 on
 * success, 400 on a malformed body. `mode` makes it fail like a Loki that is down.
 */
function fakeLoki() {
  const received: Received[] = [];
  const state = { mode: "up" as "up" | "unavailable" | "hang" };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/loki/api/v1/push") {
      return new Response("not found", { status: 404 });
    }
    if (state.mode === "unavailable") {
      await req.body?.cancel();
      return new Response("ingester unavailable", { status: 503 });
    }
    if (state.mode === "hang") {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return new Response(null, { status: 204 });
    }
    if (!req.headers.get("content-type")?.startsWith("application/json")) {
      return new Response("unsupported content type", { status: 415 });
    }
    const body = await req.json().catch(() => null);
    const valid = Array.isArray(body?.streams) &&
      body.streams.every((s: Received["streams"][0]) =>
        Object.values(s.stream).every((v) => typeof v === "string") &&
        s.values.every(([ns, line]) => /^\d+$/.test(ns) && typeof line === "string")
      );
    if (!valid) return new Response("malformed push body", { status: 400 });
    received.push({ tenant: req.headers.get("x-scope-orgid"), streams: body.streams });
    return new Response(null, { status: 204 });
  });
  const lines = () =>
    received.flatMap((r) => r.streams.flatMap((s) => s.values.map(([, line]) => line)));
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    state,
    lines,
    close: () => server.shutdown(),
  };
}

const labels = { service: "backend", backend: "b1" };
const entry = (i: number) =>
  lokiEntryFromLine(
    `{"ts":"2024-01-02T03:04:05.${String(i).padStart(3, "0")}Z","level":"info","msg":"m${i}"}\n`,
    labels,
    0,
  );

Deno.test("lokiEntryFromLine() takes ts as nanoseconds and level as a label", () => {
  const e = lokiEntryFromLine(
    '{"ts":"2024-01-02T03:04:05.678Z","level":"warn","msg":"x","service":"router"}\n',
    { service: "router" },
    0,
  );
  assert.equal(e.ns, `${Date.UTC(2024, 0, 2, 3, 4, 5, 678)}000000`);
  assert.deepEqual(e.labels, { service: "router", level: "warn" });
  assert.equal(
    e.line,
    '{"ts":"2024-01-02T03:04:05.678Z","level":"warn","msg":"x","service":"router"}',
  );
  const other = lokiEntryFromLine("plain text", { service: "router" }, 1234);
  assert.equal(other.ns, "1234000000");
  assert.equal(other.labels["level"], "info");
});

Deno.test("lokiPushBody() groups entries by label set, in order", () => {
  const warn = lokiEntryFromLine('{"ts":"2024-01-02T03:04:05.000Z","level":"warn"}', labels, 0);
  const body = lokiPushBody([entry(1), warn, entry(2)]);
  assert.equal(body.streams.length, 2);
  assert.deepEqual(body.streams[0]!.stream, { ...labels, level: "info" });
  assert.deepEqual(body.streams[0]!.values.map(([, l]) => JSON.parse(l).msg), ["m1", "m2"]);
  assert.deepEqual(body.streams[1]!.stream, { ...labels, level: "warn" });
});

Deno.test("createServiceLogger() ships lines to Loki with low-cardinality labels and the tenant", async () => {
  const loki = fakeLoki();
  const config = resolveConfig({
    fileText: JSON.stringify({
      log: { dir: "" },
      loki: { url: loki.url, tenant: "team-a", batch_interval: "20ms" },
    }),
  });
  const stdout: string[] = [];
  const pipeline = createServiceLogger(config, {
    service: "backend",
    instance: "backend-1",
    stdout: (line) => stdout.push(line),
  });
  try {
    pipeline.logger.info("backend listening", { event: "start", url: "http://x" });
    pipeline.logger.warn("slow", { request_id: "r1", token: "s3cret" });
    await pipeline.close();
    assert.equal(stdout.length, 2);
    assert.deepEqual(loki.received.map((r) => r.tenant), ["team-a"]);
    const streams = loki.received[0]!.streams;
    assert.deepEqual(
      streams.map((s) => s.stream),
      [
        { service: "backend", backend: "backend-1", level: "info" },
        { service: "backend", backend: "backend-1", level: "warn" },
      ],
    );
    const shipped = loki.lines();
    assert.deepEqual(shipped.map((l) => l + "\n"), stdout, "Loki gets the stdout lines");
    const warn = JSON.parse(shipped[1]!);
    assert.equal(warn.token, "[redacted]");
    assert.equal(warn.backend, "backend-1");
    assert.equal(streams[0]!.values[0]![0], `${Date.parse(JSON.parse(shipped[0]!).ts)}000000`);
    assert.deepEqual(pipeline.stats(), { shipped: 2, dropped: 0, buffered: 0, failedPushes: 0 });
  } finally {
    await loki.close();
  }
});

Deno.test("LokiShipper bounds its buffer while Loki is down, counts drops, then ships the rest", async () => {
  const loki = fakeLoki();
  let now = 0;
  const errors: string[] = [];
  const shipper = new LokiShipper({
    url: loki.url,
    batchIntervalMs: 1000,
    maxBufferLines: 5,
    timeoutMs: 2000,
    maxBatchLines: 2,
    initialBackoffMs: 100,
    maxBackoffMs: 400,
    now: () => now,
    autoStart: false,
    onError: (message) => errors.push(message),
  });
  try {
    loki.state.mode = "unavailable";
    for (let i = 0; i < 3; i++) shipper.push(entry(i));
    await shipper.tick();
    assert.deepEqual(shipper.stats(), { shipped: 0, dropped: 0, buffered: 3, failedPushes: 1 });
    // Inside the backoff nothing is sent.
    await shipper.tick();
    assert.equal(shipper.stats().failedPushes, 1);
    // The buffer keeps 5 lines: the 4 oldest of 9 are dropped and counted.
    for (let i = 3; i < 9; i++) shipper.push(entry(i));
    assert.deepEqual(shipper.stats(), { shipped: 0, dropped: 4, buffered: 5, failedPushes: 1 });
    now += 100;
    await shipper.tick();
    assert.equal(shipper.stats().failedPushes, 2);
    now += 150; // backoff doubled to 200 ms: not yet
    await shipper.tick();
    assert.equal(shipper.stats().failedPushes, 2);
    now += 50;
    loki.state.mode = "up";
    await shipper.tick();
    assert.deepEqual(shipper.stats(), { shipped: 5, dropped: 4, buffered: 0, failedPushes: 2 });
    assert.deepEqual(loki.lines().map((l) => JSON.parse(l).msg), ["m4", "m5", "m6", "m7", "m8"]);
    assert.equal(loki.received.length, 3, "pushes of at most maxBatchLines");
    assert.equal(errors.length, 1, "one note per failure streak");
    assert.match(errors[0]!, /answered 503: ingester unavailable/);
  } finally {
    await shipper.close();
    await loki.close();
  }
});

Deno.test("LokiShipper retries when Loki is unreachable or too slow, and drops batches Loki refuses", async () => {
  const loki = fakeLoki();
  let now = 0;
  const errors: string[] = [];
  const options = {
    batchIntervalMs: 1000,
    maxBufferLines: 100,
    timeoutMs: 50,
    initialBackoffMs: 10,
    now: () => now,
    autoStart: false,
    onError: (message: string) => errors.push(message),
  };
  // Unreachable: nothing listens on a released port.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const unreachable = new LokiShipper({ ...options, url: `http://127.0.0.1:${deadPort}` });
  unreachable.push(entry(1));
  await unreachable.tick();
  assert.deepEqual(unreachable.stats(), { shipped: 0, dropped: 0, buffered: 1, failedPushes: 1 });
  await unreachable.close();
  assert.equal(unreachable.stats().dropped, 1, "what is left at close is counted as dropped");
  // Too slow: the push times out and stays buffered.
  loki.state.mode = "hang";
  const slow = new LokiShipper({ ...options, url: loki.url });
  slow.push(entry(2));
  await slow.tick();
  assert.deepEqual(slow.stats(), { shipped: 0, dropped: 0, buffered: 1, failedPushes: 1 });
  assert.match(errors.at(-1)!, /loki\.timeout \(50 ms\)/);
  loki.state.mode = "up";
  now += 10;
  await slow.tick();
  assert.equal(slow.stats().shipped, 1);
  await slow.close();
  // Refused (400: a body Loki will never accept): dropped, not retried.
  const refused = new LokiShipper({
    ...options,
    url: loki.url,
    fetch: (input, init) => fetch(input, { ...init, body: '{"streams":"nope"}' }),
  });
  refused.push(entry(3));
  await refused.tick();
  assert.deepEqual(refused.stats(), { shipped: 0, dropped: 1, buffered: 0, failedPushes: 1 });
  await refused.close();
  await new Promise((resolve) => setTimeout(resolve, 350)); // let the hanging handler finish
  await loki.close();
});
