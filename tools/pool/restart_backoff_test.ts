import assert from "node:assert/strict";
import { RestartBackoff } from "./restart_backoff.ts";

Deno.test("RestartBackoff doubles per consecutive restart, caps, and resets after a healthy run", () => {
  const backoff = new RestartBackoff({ initialMs: 100, factor: 2, maxMs: 500, resetAfterMs: 1000 });
  assert.deepEqual([0, 0, 0, 0, 0].map((up) => backoff.next(up)), [100, 200, 400, 500, 500]);
  assert.equal(backoff.next(1000), 100, "a run of resetAfter counts as healthy");
  assert.equal(backoff.next(10), 200);
  assert.throws(() => new RestartBackoff({ initialMs: 10, maxMs: 5 }), /max >= initial/);
});
