/**
 * @module The simulated devices behind the simulated executor and the simulated layer
 * runner: `slots` accelerators that each run one job at a time for a given device time.
 * Benchmarks only; nothing here computes a model.
 *
 * Design. A job arrives with its device time `ms`; jobs beyond `slots` wait in one FIFO.
 * A job takes the free device that went idle first and occupies it from
 * `start = max(arrival, device free at)` to `end = start + ms`. Its result is computed
 * when it starts (host work: the caller's), then the job waits on a timer until `end` —
 * a busy simulated device costs no CPU.
 *
 * Invariant: a device's busy periods never overlap and never start before their job
 * arrived. A device's clock advances by the scheduled end, not by the timer's wake-up,
 * so timer lateness (about 1 ms granularity) delays single answers but never accumulates
 * into lost throughput.
 */
import type { ExecutorStats } from "./executor.ts";

/** Options of {@linkcode SimulatedDevices}. */
export interface SimulatedDevicesOptions {
  /** Devices: jobs executed at the same time. */
  slots: number;
  /** Clock in ms; default `performance.now`. */
  now?: () => number;
  /** Resolves after `ms` milliseconds; default a `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** Called once per job as it starts, with its busy period (tests check invariants). */
  onBusy?: (period: BusyPeriod) => void;
}

/** One job's stay on a device (simulated clock, ms). */
export interface BusyPeriod {
  device: number;
  arrivedAt: number;
  start: number;
  end: number;
}

/** A job's result and its device time. */
export interface DeviceRun<T> {
  value: T;
  ms: number;
}

interface Job {
  ms: number;
  rows: number;
  work: () => unknown;
  arrivedAt: number;
  resolve: (run: DeviceRun<unknown>) => void;
  reject: (error: Error) => void;
}

interface Device {
  index: number;
  busy: boolean;
  /** Scheduled end of its last job (simulated clock, ms). */
  freeAt: number;
}

/** `slots` simulated devices with one FIFO in front of them. */
export class SimulatedDevices {
  readonly slots: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #onBusy: ((period: BusyPeriod) => void) | undefined;
  readonly #devices: Device[];
  readonly #queue: Job[] = [];
  readonly #running = new Set<Promise<void>>();
  #executions = 0;
  #rows = 0;
  #busyMs = 0;
  #closed = false;

  constructor(options: SimulatedDevicesOptions) {
    if (!Number.isInteger(options.slots) || options.slots < 1) {
      throw new RangeError(`Cannot simulate devices: slots must be >= 1, got ${options.slots}`);
    }
    this.slots = options.slots;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#onBusy = options.onBusy;
    const start = this.#now();
    this.#devices = Array.from({ length: options.slots }, (_, index) => ({
      index,
      busy: false,
      freeAt: start,
    }));
  }

  /** The clock the devices run on (ms). */
  now(): number {
    return this.#now();
  }

  /**
   * Runs a job of `rows` rows that occupies a device for `ms`; `work` computes its
   * result when the job starts (a throw rejects the job; the device time is spent).
   */
  submit<T>(ms: number, rows: number, work: () => T | Promise<T>): Promise<DeviceRun<T>> {
    if (this.#closed) return Promise.reject(new Error("Cannot run: devices are closed"));
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      return Promise.reject(new RangeError(`Cannot run: device time must be >= 0, got ${ms}`));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({
        ms,
        rows,
        work,
        arrivedAt: this.#now(),
        resolve: resolve as (run: DeviceRun<unknown>) => void,
        reject,
      });
      this.#dispatch();
    });
  }

  /** Waits `ms` on a timer that {@linkcode close} waits for (loads: no device time). */
  async delay(ms: number): Promise<void> {
    if (this.#closed) throw new Error("Cannot wait: devices are closed");
    const waiting = this.#sleep(ms);
    this.#running.add(waiting);
    try {
      await waiting;
    } finally {
      this.#running.delete(waiting);
    }
  }

  stats(): ExecutorStats {
    return {
      slots: this.slots,
      executions: this.#executions,
      rows: this.#rows,
      busyMs: this.#busyMs,
      queued: this.#queue.length,
      running: this.#devices.filter((device) => device.busy).length,
    };
  }

  /** Rejects queued jobs and waits for running ones, so no timer outlives the devices. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(new Error("Cannot run: devices closed"));
    await Promise.all(this.#running);
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      // The free device that went idle first: keeps the simulated clocks close together.
      let device: Device | undefined;
      for (const candidate of this.#devices) {
        if (!candidate.busy && (!device || candidate.freeAt < device.freeAt)) device = candidate;
      }
      if (!device) return;
      device.busy = true;
      const running = this.#run(device, this.#queue.shift()!);
      this.#running.add(running);
      void running.finally(() => this.#running.delete(running));
    }
  }

  async #run(device: Device, job: Job): Promise<void> {
    const start = Math.max(job.arrivedAt, device.freeAt);
    const end = start + job.ms;
    device.freeAt = end;
    this.#onBusy?.({ device: device.index, arrivedAt: job.arrivedAt, start, end });
    try {
      const value = await job.work();
      const wait = end - this.#now();
      if (wait > 0) await this.#sleep(wait);
      this.#executions++;
      this.#rows += job.rows;
      this.#busyMs += job.ms;
      job.resolve({ value, ms: job.ms });
    } catch (error) {
      job.reject(error as Error);
    } finally {
      device.busy = false;
    }
    this.#dispatch();
  }
}
