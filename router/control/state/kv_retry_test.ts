import assert from "node:assert/strict";
import { isKvBusy, withKvRetry } from "./kv_retry.ts";

Deno.test("withKvRetry() retries 'database is locked' with growing backoff, then succeeds", async () => {
  const waits: number[] = [];
  let calls = 0;
  const value = await withKvRetry(() => {
    calls++;
    return calls < 3 ? Promise.reject(new Error("database is locked")) : Promise.resolve(42);
  }, { sleep: (ms) => (waits.push(ms), Promise.resolve()), random: () => 0.5 });
  assert.equal(value, 42);
  assert.deepEqual(waits, [20, 40]);
});

Deno.test("withKvRetry() throws other errors at once and busy ones after the last attempt", async () => {
  let calls = 0;
  await assert.rejects(
    withKvRetry(() => (calls++, Promise.reject(new TypeError("bad key"))), {
      sleep: () => Promise.resolve(),
    }),
    /bad key/,
  );
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(
    withKvRetry(() => (calls++, Promise.reject(new Error("database is locked"))), {
      attempts: 3,
      sleep: () => Promise.resolve(),
    }),
    /locked/,
  );
  assert.equal(calls, 3);
  assert.equal(isKvBusy(new Error("SQLITE_BUSY: database is busy")), true);
  assert.equal(isKvBusy(new Error("value too large")), false);
});
