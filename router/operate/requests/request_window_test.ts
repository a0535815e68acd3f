import assert from "node:assert/strict";
import type { InferenceEvent } from "../../serve/observe/inference_event.ts";
import { RequestWindow } from "./request_window.ts";

function event(at: number, ms: number, rows = 4, status = 200): InferenceEvent {
  return {
    requestId: `r${at}`,
    model: "m",
    requestType: undefined,
    rows,
    backend: "b1",
    experts: undefined,
    batches: undefined,
    status,
    ms,
    at,
  };
}

Deno.test("RequestWindow: latency CV and token rate over successful requests in the window", () => {
  const window = new RequestWindow({ windowMs: 60_000 });
  assert.equal(window.latencyCv(0), undefined);
  assert.equal(window.tokensPerS(0), undefined);
  // 20 requests at 10 ms and 20 at 30 ms: mean 20, sd 10 → CV 0.5.
  for (let i = 0; i < 40; i++) window.observe(event(1000 + i * 1000, i % 2 === 0 ? 10 : 30));
  // Failures are not latency samples.
  window.observe(event(41_000, 5000, 4, 503));
  assert.ok(Math.abs(window.latencyCv(41_000)! - 0.5) < 1e-12);
  // 40 × 4 rows over the 40 s since the first one.
  assert.equal(window.tokensPerS(41_000), 4);
  // Later, most have left the 60 s window: too few samples for a CV.
  assert.equal(window.latencyCv(95_000), undefined);
});

Deno.test("RequestWindow keeps at most `capacity` requests", () => {
  const window = new RequestWindow({ windowMs: 1e9, capacity: 2000 });
  for (let i = 0; i < 5000; i++) window.observe(event(i, 10, 1));
  // Only the last 2000 count: 2000 rows over the 1.999 s since the oldest kept one.
  assert.equal(window.tokensPerS(4999), 2000 / 1.999);
});
