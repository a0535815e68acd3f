import assert from "node:assert/strict";
import { BATCHES_HEADER, EXPERTS_HEADER } from "../../../shared/expert_trace.ts";
import { createApp } from "../app.ts";
import { createPolicy } from "../entry/create_policy.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { createHarness, type HarnessOptions } from "../../../tests/_support/router/harness.ts";
import { jsonRequest, tinyRequest } from "../../../tests/_support/router/requests.ts";
import type { InferenceEvent, InferenceObserver } from "./inference_event.ts";

/** The harness's pool and fake backends, behind an app with observers; answers carry a trace. */
async function observed(
  observers: InferenceObserver[],
  options: HarnessOptions & {
    onObserverError?: (kind: string, error: unknown) => void;
    /** Time the backend takes to answer, on the manual clock; default 0. */
    backendMs?: number;
  } = {},
) {
  const h = await createHarness(options);
  // Fake backends do not route; add the trace a real backend would answer.
  const fetch: FetchLike = async (input, init) => {
    const response = await h.network.fetch(input, init);
    if (!String(input instanceof Request ? input.url : input).endsWith("/infer")) return response;
    if (options.backendMs) await h.clock.advance(options.backendMs);
    const headers = new Headers(response.headers);
    if (response.ok) {
      headers.set(EXPERTS_HEADER, "1*2,3*2;0*4");
      headers.set(BATCHES_HEADER, "2;5");
    }
    return new Response(response.body, { status: response.status, headers });
  };
  const app = createApp({
    config: h.config,
    pool: h.pool,
    policy: createPolicy("round_robin", { loadOf: () => undefined }),
    logger: h.logger,
    fetch,
    clock: h.clock,
    observers,
    ...(options.onObserverError ? { onObserverError: options.onObserverError } : {}),
  });
  const post = (
    request: { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> },
    options: { model?: string; headers?: Record<string, string> } = {},
  ) =>
    app.request(`/v2/models/${options.model ?? "tiny"}/infer`, {
      method: "POST",
      body: request.body,
      headers: { ...request.headers, ...options.headers },
    });
  return { h, app, post };
}

Deno.test("observeInference() emits one event with the decoded trace for an answered request", async () => {
  const events: InferenceEvent[] = [];
  const { h, post } = await observed([(event) => events.push(event)], { backendMs: 37 });
  await h.clock.advance(1000);
  const res = await post(tinyRequest(3, { requestType: "chat" }), {
    headers: { "x-request-id": "req-7" },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(events.length, 1);
  const event = events[0]!;
  assert.equal(event.requestId, "req-7");
  assert.equal(event.model, "tiny");
  assert.equal(event.requestType, "chat");
  assert.equal(event.rows, 3);
  assert.equal(event.backend, "127.0.0.1:9001");
  assert.deepEqual(event.experts, [new Map([[1, 2], [3, 2]]), new Map([[0, 4]])]);
  assert.deepEqual(event.batches, [2, 5]);
  assert.equal(event.status, 200);
  assert.equal(event.error, undefined);
  assert.equal(event.at, h.clock.now());
  assert.equal(event.ms, 37, "the router-side time, on the router's clock");
  await h.close();
});

Deno.test("observeInference() reports rejected requests with the client's status and message", async () => {
  const events: InferenceEvent[] = [];
  const { h, post } = await observed([(event) => events.push(event)], {
    config: { limits: { max_body_bytes: 256 } },
  });
  const bad = await post(jsonRequest({ inputs: [] }), { headers: { "x-request-type": "code" } });
  const unknown = await post(tinyRequest(), { model: "nope" });
  const large = await post(tinyRequest(40));
  assert.deepEqual([bad.status, unknown.status, large.status], [400, 404, 413]);
  for (const res of [bad, unknown, large]) await res.body?.cancel();
  assert.deepEqual(events.map((e) => e.status), [400, 404, 413]);
  const [badEvent, unknownEvent, largeEvent] = events;
  assert.equal(badEvent!.rows, undefined);
  assert.equal(badEvent!.requestType, "code");
  assert.equal(badEvent!.backend, undefined);
  assert.equal(badEvent!.experts, undefined);
  assert.match(badEvent!.error!, /inputs/);
  assert.equal(unknownEvent!.model, "nope");
  assert.match(unknownEvent!.error!, /Cannot find model "nope"/);
  assert.match(largeEvent!.error!, /limits\.max_body_bytes/);
  await h.close();
});

Deno.test("observeInference() takes the message of an error the backend answered", async () => {
  const events: InferenceEvent[] = [];
  const { h, post } = await observed([(event) => events.push(event)], { backends: 1 });
  h.backends[0]!.mode = "overloaded";
  const res = await post(tinyRequest());
  assert.equal(res.status, 503);
  assert.match((await res.json()).error, /queue full/);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.status, 503);
  assert.equal(events[0]!.backend, "127.0.0.1:9001");
  assert.equal(events[0]!.error, "Cannot run inference: queue full");
  assert.equal(events[0]!.experts, undefined);
  await h.close();
});

Deno.test("observeInference() keeps answering when an observer throws and still calls the rest", async () => {
  const events: InferenceEvent[] = [];
  const caught: [string, string][] = [];
  const { h, app, post } = await observed([
    () => {
      throw new Error("observer bug");
    },
    (event) => events.push(event),
  ], { onObserverError: (kind, error) => caught.push([kind, (error as Error).message]) });
  const res = await post(tinyRequest());
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(events.length, 1);
  assert.deepEqual(caught, [["observer", "observer bug"]], "not dropped silently");
  // Other routes are not observed.
  const meta = await app.request("/v2/models/tiny");
  assert.equal(meta.status, 200);
  await meta.body?.cancel();
  assert.equal(events.length, 1);
  await h.close();
});
