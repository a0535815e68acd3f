/**
 * @module Supervision of one child process of the local pool (a backend or the router).
 *
 * The idea: the first start must succeed (a child that cannot start is a configuration
 * problem, reported at once); after that, whenever the child exits for any reason the
 * supervisor starts a fresh one after an exponential backoff (`restart_backoff.ts`) and
 * keeps doing so until `stop()`. Restarts are logged and counted. A restarted child that
 * does not become ready is killed and counts as one more crash. Invariant: at most one
 * live child per supervisor, and after `stop()` resolves none.
 *
 * I/O is injected (`spawn`, `ready`, `clock`, `log`) so the unit test drives it by hand.
 */
import { type Clock, systemClock, type TimerHandle } from "../../router/runtime/clock.ts";
import { RestartBackoff, type RestartBackoffOptions } from "./restart_backoff.ts";

/** How a child process ended. */
export interface ChildExit {
  code: number;
  signal: Deno.Signal | null;
}

/** A spawned child process, as the supervisor sees it. */
export interface ChildHandle {
  pid: number;
  /** Settles once when the process has exited. */
  status: Promise<ChildExit>;
  /** Sends a signal; a no-op once the process is gone. */
  kill(signal: Deno.Signal): void;
}

/** Options of {@linkcode Supervisor}. */
export interface SupervisorOptions {
  /** Name in log lines, e.g. `backend-1`. */
  name: string;
  /** Spawns a fresh child (not yet ready). */
  spawn(): ChildHandle;
  /** Resolves once `child` serves; rejects when it does not (exited, timed out). */
  ready(child: ChildHandle): Promise<void>;
  /** One human-readable line per event (exit, restart, back). */
  log(line: string): void;
  /** Called whenever the pid or the restart count changes. */
  onChange?(): void;
  /** Default: the system clock. */
  clock?: Clock;
  backoff?: RestartBackoffOptions;
  /** Time between SIGTERM and SIGKILL in `stop()` (default 10 s). */
  stopGraceMs?: number;
}

/** Keeps one child process running: restarts it with backoff until stopped. */
export class Supervisor {
  readonly name: string;
  readonly #options: SupervisorOptions;
  readonly #clock: Clock;
  readonly #backoff: RestartBackoff;
  #child: ChildHandle | undefined;
  #alive = false;
  #startedAt = 0;
  #restarts = 0;
  #supervising = false;
  #stopping = false;
  #timer: TimerHandle | undefined;

  constructor(options: SupervisorOptions) {
    this.name = options.name;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#backoff = new RestartBackoff(options.backoff);
  }

  /** The current child's pid (undefined between a crash and its restart). */
  get pid(): number | undefined {
    return this.#alive ? this.#child?.pid : undefined;
  }

  /** Restarts so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /** Starts the first child and waits until it is ready; rejects (child killed) if not. */
  async start(): Promise<void> {
    const child = this.#spawn();
    try {
      await this.#options.ready(child);
    } catch (error) {
      await this.#terminate(child, "SIGKILL");
      throw error;
    }
    this.#supervising = true;
  }

  /** Stops supervising and ends the child: SIGTERM, then SIGKILL after the grace time. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    const child = this.#child;
    if (child !== undefined && this.#alive) await this.#terminate(child, "SIGTERM");
  }

  #spawn(): ChildHandle {
    const child = this.#options.spawn();
    this.#child = child;
    this.#alive = true;
    this.#startedAt = this.#clock.now();
    child.status.then((exit) => this.#exited(child, exit));
    this.#options.onChange?.();
    return child;
  }

  #exited(child: ChildHandle, exit: ChildExit): void {
    if (child !== this.#child) return;
    this.#alive = false;
    if (this.#stopping || !this.#supervising) return;
    this.#scheduleRestart(describeExit(exit), this.#clock.now() - this.#startedAt);
  }

  #scheduleRestart(reason: string, uptimeMs: number): void {
    const delayMs = this.#backoff.next(uptimeMs);
    this.#restarts++;
    this.#options.log(
      `${this.name} exited (${reason}) after ${seconds(uptimeMs)}; ` +
        `restart ${this.#restarts} in ${seconds(delayMs)}`,
    );
    this.#options.onChange?.();
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      if (!this.#stopping) this.#restart();
    }, delayMs);
  }

  #restart(): void {
    let child: ChildHandle;
    try {
      child = this.#spawn();
    } catch (error) {
      // Spawning itself failed (e.g. the executable vanished): one more crash.
      this.#scheduleRestart(`not spawned: ${(error as Error).message}`, 0);
      return;
    }
    this.#options.ready(child).then(
      () => {
        if (child !== this.#child || !this.#alive || this.#stopping) return;
        this.#options.log(
          `${this.name} is back: pid ${child.pid}, ready after ${
            seconds(this.#clock.now() - this.#startedAt)
          } (${this.#restarts} restart${this.#restarts === 1 ? "" : "s"})`,
        );
      },
      (error) => {
        if (child !== this.#child || !this.#alive || this.#stopping) return;
        this.#options.log(`${this.name} did not become ready: ${(error as Error).message}`);
        child.kill("SIGKILL"); // its exit schedules the next restart
      },
    );
  }

  async #terminate(child: ChildHandle, signal: Deno.Signal): Promise<void> {
    child.kill(signal);
    if (signal === "SIGKILL") {
      await child.status;
      return;
    }
    let timer: TimerHandle | undefined;
    const grace = new Promise<"late">((resolve) => {
      timer = this.#clock.setTimeout(() => resolve("late"), this.#options.stopGraceMs ?? 10_000);
    });
    if (await Promise.race([child.status, grace]) === "late") {
      this.#options.log(`${this.name} ignored SIGTERM; sending SIGKILL`);
      child.kill("SIGKILL");
      await child.status;
    }
    this.#clock.clearTimeout(timer);
  }
}

function describeExit(exit: ChildExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A {@linkcode ChildHandle} over a real `Deno.ChildProcess`. */
export function childHandle(child: Deno.ChildProcess): ChildHandle {
  return {
    pid: child.pid,
    status: child.status.then((status) => ({ code: status.code, signal: status.signal })),
    kill(signal) {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    },
  };
}
