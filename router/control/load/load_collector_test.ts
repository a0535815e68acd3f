import assert from "node:assert/strict";
import { LoadReportSchema } from "../../../shared/load_report.ts";
import { createHarness, TEST_TOKEN } from "../../../tests/_support/router/harness.ts";
import { fakeLoadReport } from "../../../tests/_support/router/load_reports.ts";
import { postInfer, tinyRequest } from "../../../tests/_support/router/requests.ts";
import type { LoadApiBody } from "./load_api.ts";
import { LoadCollector } from "./load_collector.ts";

const T0 = 1_700_000_000_000;

/** Scripted reports: each call answers the next one (the last repeats). */
function script(...reports: ReturnType<typeof fakeLoadReport>[]) {
  let i = 0;
  return () => reports[Math.min(i++, reports.length - 1)]!;
}

Deno.test("LoadCollector derives rates from two polls and sends the internal token", async () => {
  const h = await createHarness({ backends: 2 });
  h.backends[0]!.loadReport = script(
    fakeLoadReport({ at: T0, busyMs: 0, tokens: 0, expertTokens: [[0, 0, 0, 0], [0, 0, 0, 0]] }),
    fakeLoadReport({
      at: T0 + 1000,
      busyMs: 1000,
      tokens: 100,
      requests: 20,
      inFlight: 3,
      expertTokens: [[150, 50, 0, 0], [50, 50, 50, 50]],
    }),
  );
  h.backends[1]!.loadReport = script(
    fakeLoadReport({ backend: "backend-2", at: T0 + 5 }),
    fakeLoadReport({
      backend: "backend-2",
      at: T0 + 505,
      busyMs: 250,
      tokens: 50,
      expertTokens: [[0, 50, 0, 0], [25, 25, 25, 25]],
    }),
  );
  await h.collector.pollNow();
  // One report each: no rates yet, so routing would use in-flight counts.
  assert.equal(h.collector.loadOf("127.0.0.1:9001"), undefined);
  await h.clock.advance(1000);
  await h.collector.pollNow();

  assert.deepEqual(h.collector.loadOf("127.0.0.1:9001"), { utilisation: 0.5, inFlight: 3 });
  assert.deepEqual(h.collector.loadOf("127.0.0.1:9002"), { utilisation: 0.25, inFlight: 0 });
  assert.equal(h.collector.reports("127.0.0.1:9001").length, 2);
  const polls = h.backends[0]!.received.filter((request) => request.path === "/v2/load");
  assert.equal(polls.length, 2);
  assert.equal(polls[0]!.headers.get("authorization"), `Bearer ${TEST_TOKEN}`);

  const load = h.collector.snapshot();
  const [first, second] = load.backends;
  assert.equal(first?.name, "backend-1");
  assert.equal(first?.tokensPerS, 100);
  assert.equal(second?.tokensPerS, 100);
  assert.equal(first?.stale, false);
  assert.equal(first?.reportAgeMs, 0);
  // Per layer, token rates summed over both backends (backend-2 over 500 ms).
  const [layer0, layer1] = load.models[0]!.layers;
  assert.deepEqual(layer0?.expertTokensPerS, [150, 150, 0, 0]);
  assert.deepEqual(layer1?.expertTokensPerS, [100, 100, 100, 100]);
  // Balancedness across backends: layer 0 ran 200 and 100 expert tokens/s on them.
  assert.equal(layer0?.balancedness, 0.75);
  assert.equal(layer1?.balancedness, 1);
  // Expert skew across experts: the top 10 % (one expert) carries half of layer 0.
  assert.deepEqual(layer0?.expertSkew, { top10Share: 0.5, cv: 1 });
  assert.equal(load.pool.reporting, 2);
  // Pool: 400 and 300 expert tokens/s summed over layers; the worst layer is layer 0.
  assert.equal(load.pool.balancedness, 0.875);
  assert.deepEqual(load.pool.worstLayer, { model: "tiny", layer: 0, balancedness: 0.75 });
  // Utilisations 0.5 and 0.25: mean 0.375 over max 0.5.
  assert.equal(load.pool.utilisationBalancedness, 0.75);
  await h.close();
});

Deno.test("a backend whose /v2/load fails is stale and the router keeps serving", async () => {
  const h = await createHarness({ backends: 2, config: { router: { policy: "load" } } });
  let tick = 0;
  h.backends[0]!.loadReport = () => fakeLoadReport({ at: T0 + 1000 * tick, busyMs: 100 * tick });
  h.backends[1]!.loadReport = () => {
    throw new Error("report broke");
  };
  await h.collector.pollNow();
  tick++;
  await h.clock.advance(1000);
  await h.collector.pollNow();

  assert.equal(h.collector.loadOf("127.0.0.1:9002"), undefined);
  assert.deepEqual(h.collector.loadOf("127.0.0.1:9001"), { utilisation: 0.05, inFlight: 0 });
  const response = await h.app.request("/api/load");
  assert.equal(response.status, 200);
  const body: LoadApiBody = await response.json();
  const broken = body.backends.find((backend) => backend.id === "127.0.0.1:9002")!;
  assert.equal(broken.stale, true);
  assert.equal(broken.error, "load report answered 500");
  assert.equal(broken.utilisation, null);
  assert.equal(body.pool.backends_reporting, 1);
  assert.equal(h.logger.find("load report unavailable").length, 1, "logged once, not per poll");
  // Inference goes on, to both backends.
  for (let i = 0; i < 20; i++) assert.equal((await postInfer(h, tinyRequest())).status, 200);
  assert.ok(h.backends[0]!.inferences().length > 0);
  assert.ok(h.backends[1]!.inferences().length > 0);
  await h.close();
});

Deno.test("LoadCollector marks unreachable, invalid and old reports stale", async () => {
  const h = await createHarness({ backends: 2 });
  h.backends[0]!.loadReport = () => ({ ...fakeLoadReport({ at: T0 }), slots: 0 });
  h.backends[1]!.loadReport = () => fakeLoadReport({ at: T0 });
  await h.collector.pollNow();
  let [invalid, good] = h.collector.snapshot().backends;
  assert.equal(invalid?.stale, true);
  assert.match(invalid?.error ?? "", /^load report is not valid: slots: /);
  assert.equal(good?.stale, false);

  h.backends[1]!.mode = "refuse";
  await h.clock.advance(1000);
  await h.collector.pollNow();
  [, good] = h.collector.snapshot().backends;
  assert.equal(good?.stale, true);
  assert.match(good?.error ?? "", /^connection failed/);
  // Its last report is kept: back up, the next report rates over the whole gap.
  h.backends[1]!.mode = "ok";
  h.backends[1]!.loadReport = () => fakeLoadReport({ at: T0 + 2000, busyMs: 2000 });
  await h.clock.advance(1000);
  await h.collector.pollNow();
  assert.deepEqual(h.collector.loadOf("127.0.0.1:9002"), { utilisation: 0.5, inFlight: 0 });
  // A report older than staleAfterMs (3 s) no longer counts.
  await h.clock.advance(3001);
  assert.equal(h.collector.loadOf("127.0.0.1:9002"), undefined);
  assert.equal(h.collector.snapshot().backends[1]?.stale, true);
  assert.equal(h.collector.snapshot().backends[1]?.reportAgeMs, 3001);
  await h.close();
});

Deno.test("LoadCollector starts a new pair when a backend restarted", async () => {
  const h = await createHarness({ backends: 1 });
  h.backends[0]!.loadReport = script(
    fakeLoadReport({ at: T0, uptimeMs: 50_000, busyMs: 9000, tokens: 900 }),
    fakeLoadReport({ at: T0 + 1000, uptimeMs: 400, busyMs: 100, tokens: 10 }),
    fakeLoadReport({ at: T0 + 2000, uptimeMs: 1400, busyMs: 300, tokens: 60 }),
  );
  await h.collector.pollNow();
  await h.collector.pollNow();
  assert.equal(h.collector.loadOf("127.0.0.1:9001"), undefined, "no rates across a restart");
  assert.equal(h.collector.reports("127.0.0.1:9001").length, 1);
  await h.collector.pollNow();
  assert.deepEqual(h.collector.loadOf("127.0.0.1:9001"), { utilisation: 0.1, inFlight: 0 });
  assert.equal(h.collector.snapshot().backends[0]?.tokensPerS, 50);
  await h.close();
});

Deno.test("LoadCollector polls every interval after start() and stops on stop()", async () => {
  const h = await createHarness({ backends: 1 });
  let polls = 0;
  h.backends[0]!.loadReport = () => fakeLoadReport({ at: T0 + 1000 * polls++ });
  const rounds: number[] = [];
  const collector = new LoadCollector(h.pool, {
    fetch: h.network.fetch,
    clock: h.clock,
    logger: h.logger,
    internalToken: TEST_TOKEN,
    intervalMs: 500,
    onRound: (load) => {
      rounds.push(load.at);
      throw new Error("handler trouble");
    },
  });
  const poolTimers = h.clock.pendingTimers;
  await collector.start();
  assert.equal(polls, 1);
  await h.clock.advance(1600);
  assert.equal(polls, 4);
  assert.equal(rounds.length, 4);
  assert.equal(h.logger.find("load round handler failed").length, 4);
  LoadReportSchema.parse(collector.reports("127.0.0.1:9001")[1]);
  await collector.stop();
  await h.clock.advance(5000);
  assert.equal(polls, 4);
  assert.equal(h.clock.pendingTimers, poolTimers);
  await h.close();
});

Deno.test("the router's own sheds reach the pool signal: saturation ≥ 0.9 and scale-up advice", async () => {
  const h = await createHarness({ backends: 2 });
  for (const [i, backend] of h.backends.entries()) {
    let tick = 0;
    // Calm backends: 10 % busy, no sheds of their own.
    backend.loadReport = () =>
      fakeLoadReport({
        backend: `backend-${i + 1}`,
        at: T0 + 1000 * tick,
        busyMs: 100 * tick++,
        tokens: 10 * tick,
      });
  }
  let shed = 0;
  let admitted = 0;
  const collector = new LoadCollector(h.pool, {
    fetch: h.network.fetch,
    clock: h.clock,
    logger: h.logger,
    internalToken: TEST_TOKEN,
    routerCounts: () => ({ shed, admitted }),
  });
  await collector.pollNow();
  await h.clock.advance(1000);
  admitted += 100;
  await collector.pollNow();
  const calm = collector.snapshot().pool;
  assert.ok(calm.saturation! < 0.5, `calm pool: saturation ${calm.saturation}`);
  assert.equal(calm.routerShedPerS, 0);

  await h.clock.advance(1000);
  admitted += 100;
  shed += 300; // The router answered 429 to 300 requests in that second.
  await collector.pollNow();
  const full = collector.snapshot().pool;
  assert.equal(full.routerShedPerS, 300);
  assert.ok(full.saturation! >= 0.9, `router shedding: saturation ${full.saturation}`);
  assert.equal(full.scale?.direction, "up");
  await h.close();
});

Deno.test("cold starts per backend reach /api/load: total and the last minute's rate", async () => {
  const h = await createHarness({ backends: 2 });
  let tick = 0;
  // backend-1 loads 3 experts on demand every 10 s; backend-2 reports no cold starts.
  h.backends[0]!.loadReport = () => {
    const report = fakeLoadReport({ at: T0 + 10_000 * tick, busyMs: tick, tokens: tick });
    report.parts[1]!.coldStarts = 2 * tick;
    report.parts[2]!.coldStarts = tick;
    return report;
  };
  h.backends[1]!.loadReport = () =>
    fakeLoadReport({ backend: "backend-2", at: T0 + 10_000 * tick, busyMs: tick });
  for (; tick <= 9; tick++) {
    await h.collector.pollNow();
    await h.clock.advance(10_000);
  }
  const body = await (await h.app.request("/api/load")).json() as LoadApiBody;
  const [first, second] = body.backends;
  // 10 polls, 10 s apart (ticks 0–9): total 3 × 9 = 27; the last minute (ticks 3–9, 60 s)
  // grew by 18 → 18/min.
  assert.equal(first?.cold_starts, 27);
  assert.equal(first?.cold_starts_per_min, 18);
  assert.equal(second?.cold_starts, null);
  assert.equal(second?.cold_starts_per_min, null);
  await h.close();
});

Deno.test("LoadCollector: a backend that stops answering is stale within two rounds; the others and the rounds go on", async () => {
  const h = await createHarness({ backends: 2 });
  let at = T0;
  for (const [i, backend] of h.backends.entries()) {
    backend.loadReport = () => fakeLoadReport({ backend: `backend-${i + 1}`, at: at += 10 });
  }
  // A slow round handler (the leader's KV writes, a stuck backend call) holds nothing.
  let handled = 0;
  let release!: () => void;
  const stuck = new Promise<void>((resolve) => release = resolve);
  const collector = new LoadCollector(h.pool, {
    fetch: h.network.fetch,
    clock: h.clock,
    logger: h.logger,
    internalToken: TEST_TOKEN,
    intervalMs: 1000,
    onRound: async () => {
      handled++;
      if (handled === 2) await stuck;
    },
  });
  void collector.start();
  await h.clock.advance(2500);
  const ageOf = (name: string) => collector.snapshot().backends.find((b) => b.name === name)!;
  assert.equal(ageOf("backend-2").stale, false);
  h.backends[1]!.mode = "hang";
  const stoppedAt = h.clock.now();
  const rounds: { at: number; stale: boolean; healthyAge: number }[] = [];
  for (let i = 0; i < 6; i++) {
    await h.clock.advance(750);
    rounds.push({
      at: h.clock.now() - stoppedAt,
      stale: ageOf("backend-2").stale,
      healthyAge: ageOf("backend-1").reportAgeMs!,
    });
  }
  // Stale once its poll timed out (≤ 2 rounds); the healthy one never older than a round + wait.
  assert.ok(rounds.filter((r) => r.at >= 2 * 1500).every((r) => r.stale), JSON.stringify(rounds));
  assert.ok(rounds.every((r) => r.healthyAge <= 1500), JSON.stringify(rounds));
  release();
  await collector.stop();
  await h.close();
});
