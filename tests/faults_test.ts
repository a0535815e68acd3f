/**
 * Faults under load on real processes (a router in front of two backends, tiny model):
 * kill -9 of a backend, SIGSTOP of a backend, and an overload burst. The tests assert
 * what clients see (statuses, Retry-After, the backend answering) and what the router
 * counts; never timings.
 */
import assert from "node:assert/strict";
import { infer } from "./_support/client.ts";
import { startPool, type TestPool } from "../tools/pool/processes.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor, type WaitForOptions } from "./_support/wait_for.ts";

/** Waits under faults are generous: up to 2 minutes, probing every 100 ms. */
const GENEROUS: WaitForOptions = { timeoutMs: 120_000, intervalMs: 100, retryErrors: false };

interface Answer {
  status: number;
  code: string | null;
  retryAfter: string | null;
  backend: string | null;
}

/**
 * `concurrency` clients sending one request after another until `running()` is false;
 * `answers` fills as they come back, `done` settles with all of them.
 */
function loadUntil(
  url: string,
  concurrency: number,
  running: () => boolean,
): { answers: Answer[]; done: Promise<Answer[]> } {
  const tokens = new Float32Array(2 * TINY.dModel).fill(0.25);
  const answers: Answer[] = [];
  const client = async () => {
    while (running()) {
      const call = await infer(url, TINY.name, tokens, TINY.dModel).catch(() => null);
      answers.push({
        status: call?.status ?? 0,
        code: call?.error?.code ?? null,
        retryAfter: call?.headers.get("retry-after") ?? null,
        backend: call?.headers.get("x-switchyard-backend") ?? null,
      });
    }
  };
  const done = Promise.all(Array.from({ length: concurrency }, client)).then(() => answers);
  return { answers, done };
}

async function healthyBackends(pool: TestPool): Promise<number> {
  const response = await fetch(`${pool.router.url}/v2/health/ready`);
  const body = await response.json();
  return body.details?.healthy_backends ?? 0;
}

/** One sample of `/metrics` (name with labels, exactly as exposed). */
async function metric(pool: TestPool, series: string): Promise<number> {
  const text = await (await fetch(`${pool.router.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

function tally(answers: readonly Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    counts[`${a.status} ${a.code ?? ""}`.trim()] =
      (counts[`${a.status} ${a.code ?? ""}`.trim()] ?? 0) + 1;
  }
  return counts;
}

Deno.test("kill -9 of a backend under load: no request fails through the router", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({ modelDir, backends: 2 });
  try {
    let running = true;
    const load = loadUntil(pool.router.url, 4, () => running);
    await waitFor(
      "answers from both backends",
      () =>
        ["backend-1", "backend-2"].every((name) => load.answers.some((a) => a.backend === name)),
      GENEROUS,
    );
    await pool.backends[0]!.kill();
    // Until the router has ejected the dead backend, and a while after.
    await waitFor(
      "the dead backend ejected",
      async () => (await healthyBackends(pool)) === 1,
      GENEROUS,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    running = false;
    const answers = await load.done;
    assert.ok(answers.length > 0);
    assert.deepEqual(tally(answers), { "200": answers.length }, JSON.stringify(tally(answers)));
    assert.ok(
      await metric(pool, 'switchyard_router_ejections_total{reason="connection"}') +
          await metric(pool, 'switchyard_router_ejections_total{reason="probe_failed"}') >= 1,
    );
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});

Deno.test("SIGSTOP of a backend under load: requests retried elsewhere, none fails", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({ modelDir, backends: 2 });
  const stopped = pool.backends[0]!.child.pid;
  try {
    let running = true;
    const load = loadUntil(pool.router.url, 4, () => running);
    await waitFor(
      "answers from both backends",
      () =>
        ["backend-1", "backend-2"].every((name) => load.answers.some((a) => a.backend === name)),
      GENEROUS,
    );
    Deno.kill(stopped, "SIGSTOP");
    // Attempts to it time out (router.retry.try_timeout, 5 s) and go to the other backend.
    await waitFor(
      "a retry after a timeout",
      async () =>
        await metric(pool, 'switchyard_router_retries_total{cause="timeout"}') >= 1 ||
        await metric(pool, 'switchyard_router_retries_total{cause="ejected"}') >= 1,
      GENEROUS,
    );
    Deno.kill(stopped, "SIGCONT");
    await waitFor(
      "both backends in rotation again",
      async () => (await healthyBackends(pool)) === 2,
      GENEROUS,
    );
    running = false;
    const answers = await load.done;
    assert.deepEqual(tally(answers), { "200": answers.length }, JSON.stringify(tally(answers)));
    assert.ok(answers.some((a) => a.backend === "backend-2"));
  } finally {
    try {
      Deno.kill(stopped, "SIGCONT");
    } catch { /* gone */ }
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});

Deno.test("an overload burst is answered 200, or 429/503 with Retry-After — never 'no healthy backend'", async () => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 2,
    env: {
      SWITCHYARD_ROUTER__ADMISSION__MAX_IN_FLIGHT: "8",
      SWITCHYARD_ROUTER__ADMISSION__MAX_IN_FLIGHT_PER_BACKEND: "2",
      SWITCHYARD_LOG__REQUESTS: "false",
    },
  });
  try {
    let running = true;
    const load = loadUntil(pool.router.url, 64, () => running);
    await waitFor("a few hundred answers", async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      return (await metric(pool, 'switchyard_router_shed_total{reason="router_full"}')) +
          (await metric(pool, 'switchyard_router_shed_total{reason="backends_full"}')) >= 200;
    }, GENEROUS);
    running = false;
    const answers = await load.done;
    for (const answer of answers) {
      assert.ok([200, 429, 503].includes(answer.status), JSON.stringify(answer));
      if (answer.status !== 200) assert.equal(answer.retryAfter, "1", JSON.stringify(answer));
      assert.notEqual(answer.code, "no_healthy_backend", JSON.stringify(tally(answers)));
    }
    assert.ok(answers.some((a) => a.status === 200));
    assert.ok(answers.some((a) => a.status === 429));
    assert.equal(await healthyBackends(pool), 2, "no healthy backend was ejected");
    assert.equal(await metric(pool, "switchyard_router_in_flight_requests"), 0);
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
