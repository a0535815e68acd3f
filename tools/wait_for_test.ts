/** The one bounded poll: answers, "not yet", errors, stops and time-outs. */
import assert from "node:assert/strict";
import { waitFor } from "./wait_for.ts";

Deno.test("waitFor() returns the first answer that is neither undefined nor false", async () => {
  let n = 0;
  const value = await waitFor("the third probe", () => ++n >= 3 ? n : false, {
    timeoutMs: 10_000,
    intervalMs: 1,
  });
  assert.equal(value, 3);
});

Deno.test("waitFor() ends at once on a probe's error unless errors are retried, then names the last", async () => {
  const failing = () => Promise.reject(new Error("refused"));
  await assert.rejects(waitFor("x", failing, { timeoutMs: 10_000 }), /refused/);
  await assert.rejects(
    waitFor("a server", failing, { timeoutMs: 20, intervalMs: 1, retryErrors: true }),
    /timed out after 20 ms waiting for a server: Error: refused/,
  );
});

Deno.test("waitFor(): stop() ends the wait with its reason; detail() is added to a time-out; onTimeout resolve", async () => {
  await assert.rejects(
    waitFor("y", () => undefined, { timeoutMs: 10_000, intervalMs: 1, stop: () => "child exited" }),
    /child exited/,
  );
  await assert.rejects(
    waitFor("z", () => undefined, { timeoutMs: 5, intervalMs: 1, detail: () => "last: 7" }),
    /waiting for z: last: 7/,
  );
  assert.equal(
    await waitFor("w", () => undefined, { timeoutMs: 5, intervalMs: 1, onTimeout: "resolve" }),
    undefined,
  );
});
