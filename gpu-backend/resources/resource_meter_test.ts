import assert from "node:assert/strict";
import { ResourceReportSchema } from "../../shared/load_report.ts";
import { NetCounter } from "./net_counter.ts";
import { readResources } from "./resource_meter.ts";

Deno.test("readResources() reports CPU ms, net bytes, and null accelerator and power on a CPU host", () => {
  const net = new NetCounter();
  net.received(10);
  net.sent(25);
  const report = readResources({
    net,
    accelerator: { reading: null },
    cpuUsage: () => ({ user: 1500, system: 500 }),
  });
  assert.deepEqual(report, {
    cpuMs: 2,
    netRxBytes: 10,
    netTxBytes: 25,
    accelerator: null,
    powerW: null,
  });
  assert.deepEqual(ResourceReportSchema.parse(report), report);
});

Deno.test("readResources() takes power from the accelerator reading only", () => {
  const reading = {
    devices: 1,
    utilisation: 0.5,
    memoryUsedBytes: 1,
    memoryTotalBytes: 2,
    powerW: 123.4,
  };
  const net = new NetCounter();
  const report = readResources({ net, accelerator: { reading } });
  assert.equal(report.powerW, 123.4);
  assert.deepEqual(report.accelerator, reading);
  assert.ok(report.cpuMs > 0, "the real process.cpuUsage() counts this test's CPU time");
  const noPower = readResources({ net, accelerator: { reading: { ...reading, powerW: null } } });
  assert.equal(noPower.powerW, null);
});
