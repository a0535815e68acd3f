import assert from "node:assert/strict";
import { ManualClock } from "../../tests/_support/router/manual_clock.ts";
import { launcherControlApp } from "./launcher_control.ts";
import { ScalableBackends } from "./scalable_backends.ts";
import type { ChildExit, ChildHandle } from "./supervisor.ts";

function setUp(injectedColdStartMs = 0) {
  const clock = new ManualClock(1_000_000);
  const spawned: { name: string; port: number; signals: Deno.Signal[] }[] = [];
  const lines: string[] = [];
  const backends = new ScalableBackends({
    basePort: 9003,
    clock,
    injectedColdStartMs,
    stopGraceMs: 100,
    log: (line) => lines.push(line),
    spawn: (name, port) => {
      const record = { name, port, signals: [] as Deno.Signal[] };
      spawned.push(record);
      let resolve!: (exit: ChildExit) => void;
      const child: ChildHandle = {
        pid: 100 + spawned.length,
        status: new Promise((r) => resolve = r),
        kill: (signal) => {
          record.signals.push(signal);
          resolve({ code: 0, signal });
        },
      };
      return child;
    },
    ready: () => Promise.resolve(),
  });
  return { clock, spawned, lines, backends };
}

Deno.test("ScalableBackends starts the missing backends after the injected cold start, and reports request → ready", async () => {
  const { clock, spawned, lines, backends } = setUp(20_000);
  const list = backends.setTarget({ target: 2 });
  assert.deepEqual(list.backends.map((b) => [b.name, b.url, b.state, b.scaled]), [
    ["backend-scaled-1", "http://127.0.0.1:9003", "starting", true],
    ["backend-scaled-2", "http://127.0.0.1:9004", "starting", true],
  ]);
  await clock.advance(19_999);
  assert.equal(spawned.length, 0, "nothing spawns during the injected cold start");
  await clock.advance(1);
  await clock.settle();
  assert.deepEqual(spawned.map((s) => s.port), [9003, 9004]);
  const ready = backends.list().backends;
  assert.deepEqual(ready.map((b) => b.state), ["ready", "ready"]);
  assert.deepEqual(ready.map((b) => b.ready_at! - b.requested_at), [20_000, 20_000]);
  assert.match(lines[0]!, /after an injected cold start of 20\.0 s/);
  // A lower target alone stops nothing: only drained backends the router names.
  backends.setTarget({ target: 1 });
  assert.equal(backends.list().backends.length, 2);
  backends.setTarget({ target: 1, remove: ["http://127.0.0.1:9004/"] });
  await clock.settle();
  assert.deepEqual(spawned[1]!.signals, ["SIGTERM"]);
  assert.deepEqual(backends.list().backends.map((b) => b.url), ["http://127.0.0.1:9003"]);
  assert.throws(() => backends.setTarget({ target: -1 }), RangeError);
  await backends.close();
});

Deno.test("the launcher control API answers 401 without the token and 400 naming a bad field", async () => {
  const { backends } = setUp();
  const app = launcherControlApp(backends, "t0k3n-0123456789");
  assert.equal((await app.request("/v2/launcher/backends")).status, 401);
  const auth = { authorization: "Bearer t0k3n-0123456789", "content-type": "application/json" };
  const bad = await app.request("/v2/launcher/backends", {
    method: "PUT",
    headers: auth,
    body: JSON.stringify({ target: "many" }),
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /^Cannot scale: target: /);
  const ok = await app.request("/v2/launcher/backends", {
    method: "PUT",
    headers: auth,
    body: JSON.stringify({ target: 1 }),
  });
  assert.equal(ok.status, 202);
  assert.equal((await ok.json()).backends.length, 1);
  await backends.close();
});
