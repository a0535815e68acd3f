import assert from "node:assert/strict";
import { capacityBacktest } from "./prewarm_backtest.ts";

Deno.test("forecast-driven capacity catches the demo traffic's diurnal ramps that a reactive scaler misses", async () => {
  // Backends that take 30 minutes to start: reacting to what was just seen is too late on
  // a rising ramp; the job asks one (measured) lead time ahead.
  const [forecast, reactive] = await capacityBacktest({ seed: 3, coldStartMs: 30 * 60_000 });
  assert.equal(forecast!.policy, "forecast");
  assert.equal(forecast!.buckets, 288);
  assert.ok(forecast!.leadMs! > 30 * 60_000, `lead ${forecast!.leadMs}`);
  assert.ok(
    forecast!.rampUnder * 3 <= reactive!.rampUnder,
    `ramp buckets under-provisioned: forecast ${forecast!.rampUnder}, reactive ${
      reactive!.rampUnder
    }`,
  );
  assert.ok(forecast!.overloaded <= reactive!.overloaded);
  // Not by buying everything: within 5 % of the reactive scaler's backend-hours.
  assert.ok(forecast!.backendHours <= reactive!.backendHours * 1.05);
});
