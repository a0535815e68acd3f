/**
 * Slow bodies cannot crowd valid requests out (issue 12): on a real router and backend,
 * more slow-body connections than `router.admission.max_in_flight` are held open, and
 * valid requests still get 200 — a request takes its in-flight slot only once its body
 * is whole. When every `router.admission.max_body_readers` slot is taken by a young
 * read, the next request is shed with 429 + Retry-After; once the slow clients go, the
 * router serves again. No timing assertions: readiness is polled from `/metrics`.
 */
import assert from "node:assert/strict";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { startPool } from "../tools/pool/processes.ts";
import { sendPartial } from "../tools/net/raw_http.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const MAX_IN_FLIGHT = 4;
const MAX_READERS = 8;

async function readers(router: string): Promise<number> {
  const text = parseExposition(await (await fetch(`${router}/metrics`)).text());
  return findSamples(text, "switchyard_router_body_readers", {})[0]?.value ?? -1;
}

/** Waits until the router reads `want` bodies (a readiness wait, not a timing assertion). */
async function untilReaders(router: string, want: number): Promise<void> {
  let seen: number | undefined;
  await waitFor(
    `the router to read ${want} bodies`,
    async () => (seen = await readers(router)) === want,
    {
      timeoutMs: 60_000,
      intervalMs: 100,
      retryErrors: false,
      detail: () => `it reads ${seen}`,
    },
  );
}

Deno.test("slow bodies beyond max_in_flight do not crowd out valid requests; a full reader bound sheds 429", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_ROUTER__ADMISSION__MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      SWITCHYARD_ROUTER__ADMISSION__MAX_BODY_READERS: String(MAX_READERS),
      // Long enough that neither the timeout nor eviction frees a slot during the test.
      SWITCHYARD_ROUTER__ADMISSION__READER_GRACE: "10m",
      SWITCHYARD_LIMITS__BODY_TIMEOUT: "10m",
    },
  });
  const router = pool.router.url;
  const url = `${router}/v2/models/${TINY.name}/infer`;
  const tokens = new Float32Array(2 * TINY.dModel).fill(0.25);
  const open = () => sendPartial({ url, contentLength: 10_000, sent: '{"inputs":[' });
  const slow: Deno.TcpConn[] = [];
  try {
    // Warm the route (model discovery) before the slow clients arrive.
    assert.equal((await infer(router, TINY.name, tokens, TINY.dModel)).status, 200);
    for (let i = 0; i < MAX_IN_FLIGHT + 2; i++) slow.push(await open());
    await untilReaders(router, MAX_IN_FLIGHT + 2);
    for (let i = 0; i < 5; i++) {
      const call = await infer(router, TINY.name, tokens, TINY.dModel);
      assert.equal(call.status, 200, JSON.stringify(call.error));
    }
    while (slow.length < MAX_READERS) slow.push(await open());
    await untilReaders(router, MAX_READERS);
    const shed = await infer(router, TINY.name, tokens, TINY.dModel);
    assert.equal(shed.status, 429, JSON.stringify(shed.error));
    assert.equal(shed.headers.get("retry-after"), "1");
    assert.match(shed.error!.error, /router\.admission\.max_body_readers/);
    for (const conn of slow.splice(0)) conn.close();
    await untilReaders(router, 0);
    const after = await infer(router, TINY.name, tokens, TINY.dModel);
    assert.equal(after.status, 200, JSON.stringify(after.error));
  } finally {
    for (const conn of slow) conn.close();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true }).catch(() => {});
  }
});
