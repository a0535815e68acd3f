/**
 * One contract over every scaler the job can be given (advisory, webhook, kubernetes,
 * local): each takes "target N ready by T" and "stop these drained backends", carries the
 * deadline and the target to whatever acts on them, and never throws — a refused
 * connection, an error answer or a hang is an outcome within the time limit.
 * The webhook posts to a real server; the local scaler talks to the launcher's real
 * control API (tools/pool) whose processes are fakes.
 */
import assert from "node:assert/strict";
import { systemClock } from "../../runtime/clock.ts";
import { ScalableBackends } from "../../../tools/pool/scalable_backends.ts";
import { serveLauncherControl } from "../../../tools/pool/launcher_control.ts";
import type { ChildExit, ChildHandle } from "../../../tools/pool/supervisor.ts";
import { DesiredReplicasScaler } from "./desired_scaler.ts";
import { LauncherScaler } from "./local_scaler.ts";
import type { Scaler, ScaleRequest } from "./prewarm_types.ts";
import { AdvisoryScaler, type WebhookBody, WebhookScaler } from "./scalers.ts";

const T = Date.parse("2030-01-01T20:00:00Z");
const UP: ScaleRequest = {
  model: "m",
  contract: "c1",
  current: 2,
  target: 4,
  readyBy: T,
  remove: [],
  predictedTokensPerS: 600,
  capacityPerBackend: 200,
  threshold: 0.8,
  reason: 'event "promo" needs 4 backends',
};
const TOKEN = "launcher-token-0123456789";

/** What a harness lets the contract observe: the scaler and what its target saw. */
interface Harness {
  scaler: Scaler;
  /** The target and deadline the far side holds now (null: it holds none, advisory). */
  seen(): Promise<{ target: number; readyBy: number | null; removed: string[] } | null>;
  /** Makes the far side fail (error answer or unreachable) or hang. */
  break(how: "fail" | "hang"): void;
  close(): Promise<void>;
}

/** A fake backend process that exits when killed. */
function fakeChild(pid: number): ChildHandle {
  let resolve!: (exit: ChildExit) => void;
  const status = new Promise<ChildExit>((r) => resolve = r);
  return { pid, status, kill: (signal) => resolve({ code: 0, signal }) };
}

const harnesses: Record<string, () => Promise<Harness>> = {
  advisory() {
    return Promise.resolve({
      scaler: new AdvisoryScaler(),
      seen: () => Promise.resolve(null),
      break: () => {},
      close: () => Promise.resolve(),
    });
  },
  kubernetes() {
    const scaler = new DesiredReplicasScaler(2);
    return Promise.resolve({
      scaler,
      seen: () =>
        Promise.resolve({ target: scaler.desired()!, readyBy: scaler.readyBy(), removed: [] }),
      break: () => {},
      close: () => Promise.resolve(),
    });
  },
  webhook() {
    let last: WebhookBody | undefined;
    let mode: "ok" | "fail" | "hang" = "ok";
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        last = await req.json();
        if (mode === "hang") await new Promise((r) => setTimeout(r, 2000));
        return new Response(null, { status: mode === "fail" ? 500 : 202 });
      },
    );
    const scaler = new WebhookScaler({
      url: `http://127.0.0.1:${server.addr.port}/scale`,
      fetch,
      clock: systemClock,
      timeoutMs: 300,
    });
    return Promise.resolve({
      scaler,
      seen: () =>
        Promise.resolve(
          last === undefined ? null : {
            target: last.target,
            readyBy: last.ready_by === null ? null : Date.parse(last.ready_by),
            removed: last.remove,
          },
        ),
      break: (how) => mode = how,
      close: () => server.shutdown(),
    });
  },
  async local() {
    let pid = 1000;
    const backends = new ScalableBackends({
      basePort: 19_101,
      spawn: () => fakeChild(pid++),
      ready: () => Promise.resolve(),
      log: () => {},
      stopGraceMs: 100,
    });
    for (const [i, url] of ["http://127.0.0.1:19001", "http://127.0.0.1:19002"].entries()) {
      // The pool's first two backends, as the launcher registers them.
      const { Supervisor } = await import("../../../tools/pool/supervisor.ts");
      const supervisor = new Supervisor({
        name: `backend-${i + 1}`,
        spawn: () => fakeChild(pid++),
        ready: () => Promise.resolve(),
        log: () => {},
      });
      await supervisor.start();
      backends.adopt(`backend-${i + 1}`, url, supervisor);
    }
    let control = serveLauncherControl(backends, { token: TOKEN });
    const url = control.url;
    let removed: string[] = [];
    const scaler = new LauncherScaler({
      url,
      fetch,
      clock: systemClock,
      token: TOKEN,
      timeoutMs: 300,
    });
    const wrapped: Scaler = {
      name: scaler.name,
      acts: scaler.acts,
      scale: async (request) => {
        removed = request.remove;
        return await scaler.scale(request);
      },
      ready: () => scaler.ready(),
    };
    return {
      scaler: wrapped,
      seen: () => {
        const list = backends.list();
        return Promise.resolve({
          target: list.target,
          readyBy: null, // the launcher starts at once; the deadline is the router's
          removed: removed.filter((u) => !list.backends.some((b) => b.url === u)),
        });
      },
      break: () => {
        void control.close();
        control = { url, close: () => Promise.resolve() };
      },
      close: async () => {
        await control.close();
        await backends.close();
        for (const { supervisor } of backends.supervisors()) await supervisor.stop();
      },
    };
  },
};

for (const [name, make] of Object.entries(harnesses)) {
  Deno.test(`scaler contract (${name}): a scale-up carries the target (and the deadline where it travels)`, async () => {
    const h = await make();
    try {
      const outcome = await h.scaler.scale(UP);
      assert.equal(outcome.scaler, h.scaler.name);
      assert.notEqual(outcome.status, "failed", outcome.detail);
      assert.match(outcome.detail ?? "", /2 → 4 backends|desired_replicas 4/);
      const seen = await h.seen();
      if (h.scaler.acts) {
        assert.equal(seen?.target, 4);
        if (name !== "local") assert.equal(seen?.readyBy, T);
      } else {
        assert.equal(seen, null, "advisory acts on nothing");
      }
    } finally {
      await h.close();
    }
  });

  Deno.test(`scaler contract (${name}): a scale-down names the drained backends to stop`, async () => {
    const h = await make();
    try {
      const up = await h.scaler.scale(UP);
      const drained = up.started?.[1] ?? "http://127.0.0.1:9004";
      const outcome = await h.scaler.scale({
        ...UP,
        contract: null,
        current: 4,
        target: 3,
        readyBy: null,
        remove: [drained],
        reason: "backend drained after the peak",
      });
      assert.notEqual(outcome.status, "failed", outcome.detail);
      const seen = await h.seen();
      if (h.scaler.acts) {
        assert.equal(seen?.target, 3);
        if (name !== "kubernetes") assert.deepEqual(seen?.removed, [drained]);
      }
    } finally {
      await h.close();
    }
  });

  Deno.test(`scaler contract (${name}): failures and hangs are outcomes, never exceptions`, async () => {
    const h = await make();
    try {
      for (const how of ["fail", "hang"] as const) {
        h.break(how);
        const started = performance.now();
        const outcome = await h.scaler.scale(UP);
        assert.ok(performance.now() - started < 5_000, "bounded by the time limit");
        if (name === "webhook" || name === "local") {
          assert.equal(outcome.status, "failed");
          assert.ok((outcome.detail ?? "").length > 0);
        }
        assert.deepEqual(await (h.scaler.ready?.() ?? Promise.resolve([])), []);
      }
    } finally {
      await h.close();
    }
  });
}
