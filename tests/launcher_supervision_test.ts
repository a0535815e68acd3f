/**
 * `deno task start` supervises its pool: kill -9 of a backend, then of the router, under
 * a trickle of requests — each comes back (new pid, restart counted and logged) and
 * serves again, and the launcher never stops the pool. SIGTERM to `deno task start`
 * then leaves no process behind.
 */
import assert from "node:assert/strict";
import { createRandom } from "../tools/model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { infer } from "./_support/client.ts";
import { isRunning, startLauncher } from "./_support/launcher.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

Deno.test("deno task start restarts a killed backend and router and stops cleanly", async () => {
  const modelDir = await makeTinyModel();
  const traffic = (await loadDemoTraffic(modelDir))!;
  const launcher = await startLauncher({ env: { SWITCHYARD_MODEL__DIR: modelDir } });
  const pids = new Set<number>();
  const answers: { status: number; backend: string | null; at: number }[] = [];
  let trickling = true;
  try {
    const up = await launcher.waitStatus((s) => s.router.pid !== null);
    pids.add(up.launcher);
    for (const child of [up.router, ...up.backends]) pids.add(child.pid!);
    const router = up.router.url;

    // A trickle of requests for the whole test: one at a time, ~20 per second.
    const random = createRandom(5);
    const trickle = (async () => {
      while (trickling) {
        const tokens = demoTokens(traffic, "chat", 2, random);
        const call = await infer(router, TINY.name, tokens, TINY.dModel).catch(() => null);
        answers.push({
          status: call?.status ?? 0,
          backend: call?.headers.get("x-switchyard-backend") ?? null,
          at: Date.now(),
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const servedSince = (since: number, backend?: string) =>
      launcher.waitStatus(() =>
        answers.some((a) =>
          a.at > since && a.status === 200 && (backend === undefined || a.backend === backend)
        )
      );
    await servedSince(0, "backend-1");

    // kill -9 a backend: a new process takes its place and serves.
    const oldBackend = up.backends[0]!.pid!;
    Deno.kill(oldBackend, "SIGKILL");
    const afterBackend = await launcher.waitStatus((s) =>
      s.backends[0]!.restarts === 1 && s.backends[0]!.pid !== null &&
      s.backends[0]!.pid !== oldBackend
    );
    pids.add(afterBackend.backends[0]!.pid!);
    await launcher.waitOutput(/backend-1 is back: pid \d+/);
    await servedSince(Date.now(), "backend-1");
    assert.match(
      launcher.output(),
      /backend-1 exited \(signal SIGKILL\) after [\d.]+ s; restart 1/,
    );

    // kill -9 the router: it comes back on the same port and serves.
    const oldRouter = afterBackend.router.pid!;
    Deno.kill(oldRouter, "SIGKILL");
    const afterRouter = await launcher.waitStatus((s) =>
      s.router.restarts === 1 && s.router.pid !== null && s.router.pid !== oldRouter
    );
    pids.add(afterRouter.router.pid!);
    await servedSince(Date.now());
    assert.equal(afterRouter.backends[1]!.restarts, 0, "the other backend was left alone");
    assert.equal(afterRouter.launcher, up.launcher, "the launcher itself never stopped");
    trickling = false;
    await trickle;
    assert.ok(answers.filter((a) => a.status === 200).length > 0);

    // SIGTERM to `deno task start`: it exits 0 and no process of the pool is left.
    assert.equal(await launcher.stop(), 0, launcher.output());
    for (const pid of pids) {
      assert.equal(await isRunning(pid), false, `pid ${pid} outlived the launcher`);
    }
    assert.match(launcher.output(), /stopped \(restarts: router 1, backend-1 1\)/);
  } finally {
    trickling = false;
    await launcher.stop();
    await launcher.cleanup();
    await Deno.remove(modelDir, { recursive: true });
  }
});
