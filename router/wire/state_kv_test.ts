/** @module The state KV: fail fast when required, readiness when not. */
import assert from "node:assert/strict";
import { resolveConfig } from "../../shared/config.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { ManualClock } from "../../tests/_support/router/manual_clock.ts";
import { openStateKv, StateHealth, StateUnavailableError } from "./state_kv.ts";

function config(kv: string, required?: boolean) {
  return resolveConfig({
    fileText: JSON.stringify({ state: { kv, ...(required === undefined ? {} : { required }) } }),
  });
}

Deno.test("a KV file that is not a database stops the router unless state.required is false", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state.kv`;
  await Deno.writeTextFile(path, "this is not an SQLite database, only bytes");
  try {
    const logger = new MemoryLogger();
    const error = await openStateKv(config(path), undefined, logger).catch((e) => e);
    assert.ok(error instanceof StateUnavailableError, String(error));
    assert.ok(error.message.startsWith(`Cannot open state KV "${path}": `), error.message);
    assert.match(error.message, /state\.required: false/);

    const opened = await openStateKv(config(path, false), undefined, logger);
    assert.equal(opened.state, undefined);
    assert.ok(opened.problem?.startsWith(`Cannot open state KV "${path}": `));
    assert.equal(
      logger.find("state unavailable: plans, history, series, events and alerts are off").length,
      1,
    );
    const health = new StateHealth(opened, { location: path, clock: new ManualClock() });
    assert.deepEqual(await health.check(), { ok: false, kv: path, error: opened.problem });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StateHealth reads the KV at most every everyMs and reports a store that stopped reading", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/sub/state.kv`;
  try {
    const opened = await openStateKv(config(path), undefined, new MemoryLogger());
    assert.equal(opened.problem, null);
    const clock = new ManualClock();
    const health = new StateHealth(opened, { location: path, clock, everyMs: 1000 });
    assert.deepEqual(await health.check(), { ok: true, kv: path });
    opened.state!.kv.close();
    // Within everyMs the last answer stands; after it, the failed read shows.
    assert.deepEqual(await health.check(), { ok: true, kv: path });
    await clock.advance(1000);
    const after = await health.check();
    assert.equal(after.ok, false);
    assert.ok(after.error?.startsWith(`Cannot read state KV "${path}": `), after.error);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
