import assert from "node:assert/strict";
import { ManualClock } from "../../tests/_support/router/manual_clock.ts";
import { type ChildExit, type ChildHandle, Supervisor } from "./supervisor.ts";

/** A fake child: exits when killed (unless it ignores SIGTERM) or when `crash()` is called. */
class FakeChild implements ChildHandle {
  readonly pid: number;
  readonly status: Promise<ChildExit>;
  readonly signals: Deno.Signal[] = [];
  exited = false;
  #resolve!: (exit: ChildExit) => void;
  constructor(pid: number, readonly ignoreTerm = false) {
    this.pid = pid;
    this.status = new Promise((resolve) => this.#resolve = resolve);
  }
  kill(signal: Deno.Signal): void {
    this.signals.push(signal);
    if (signal === "SIGTERM" && this.ignoreTerm) return;
    this.crash({ code: 128, signal });
  }
  crash(exit: ChildExit = { code: 137, signal: "SIGKILL" }): void {
    if (this.exited) return;
    this.exited = true;
    this.#resolve(exit);
  }
}

function setUp(options: { readyFails?: (n: number) => boolean; ignoreTerm?: boolean } = {}) {
  const clock = new ManualClock();
  const children: FakeChild[] = [];
  const lines: string[] = [];
  const supervisor = new Supervisor({
    name: "backend-1",
    clock,
    spawn: () => {
      const child = new FakeChild(100 + children.length, options.ignoreTerm);
      children.push(child);
      return child;
    },
    ready: (child) =>
      options.readyFails?.(children.indexOf(child as FakeChild))
        ? Promise.reject(new Error("not ready in time"))
        : Promise.resolve(),
    log: (line) => lines.push(line),
    backoff: { initialMs: 100, factor: 2, maxMs: 1000, resetAfterMs: 10_000 },
    stopGraceMs: 500,
  });
  return { clock, children, lines, supervisor };
}

Deno.test("Supervisor restarts a crashed child after the backoff and counts it", async () => {
  const { clock, children, lines, supervisor } = setUp();
  await supervisor.start();
  assert.equal(supervisor.pid, 100);
  children[0]!.crash();
  await clock.settle();
  assert.equal(supervisor.restarts, 1);
  assert.equal(supervisor.pid, undefined, "nothing runs during the backoff");
  assert.match(lines[0]!, /backend-1 exited \(signal SIGKILL\) after 0\.0 s; restart 1 in 0\.1 s/);
  await clock.advance(99);
  assert.equal(children.length, 1, "not before the delay");
  await clock.advance(1);
  assert.equal(children.length, 2);
  assert.equal(supervisor.pid, 101);
  assert.match(lines[1]!, /backend-1 is back: pid 101, ready after 0\.0 s \(1 restart\)/);

  children[1]!.crash({ code: 1, signal: null });
  await clock.settle();
  assert.match(lines[2]!, /exited \(code 1\).*restart 2 in 0\.2 s/);
  await clock.advance(200);
  assert.equal(children.length, 3);
  await supervisor.stop();
});

Deno.test("Supervisor kills a restarted child that never becomes ready and tries again", async () => {
  const { clock, children, lines, supervisor } = setUp({ readyFails: (n) => n === 1 });
  await supervisor.start();
  children[0]!.crash();
  await clock.advance(100);
  assert.deepEqual(children[1]!.signals, ["SIGKILL"]);
  assert.ok(lines.some((line) => /did not become ready: not ready in time/.test(line)));
  assert.equal(supervisor.restarts, 2, "the failed restart counts as a crash");
  await clock.advance(200);
  assert.equal(children.length, 3);
  assert.equal(supervisor.pid, 102);
  await supervisor.stop();
});

Deno.test("Supervisor.start() rejects and leaves no child when the first start fails", async () => {
  const { children, supervisor } = setUp({ readyFails: () => true });
  await assert.rejects(supervisor.start(), /not ready in time/);
  assert.equal(children[0]!.exited, true);
  assert.equal(supervisor.pid, undefined);
  assert.equal(supervisor.restarts, 0, "no restart loop at start-up");
});

Deno.test("Supervisor.stop() ends the child and cancels a pending restart", async () => {
  const { clock, children, supervisor } = setUp();
  await supervisor.start();
  children[0]!.crash();
  await clock.settle();
  await supervisor.stop();
  await clock.advance(5000);
  assert.equal(children.length, 1, "no restart after stop()");
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("Supervisor.stop() sends SIGKILL when SIGTERM is ignored", async () => {
  const { clock, children, lines, supervisor } = setUp({ ignoreTerm: true });
  await supervisor.start();
  const stopped = supervisor.stop();
  await clock.advance(500);
  await stopped;
  assert.deepEqual(children[0]!.signals, ["SIGTERM", "SIGKILL"]);
  assert.ok(lines.some((line) => /ignored SIGTERM/.test(line)));
  assert.equal(supervisor.pid, undefined);
});
