/**
 * @module Test support: a virtual clock for the simulated devices. `sleep` registers a
 * timer, `run()` fires timers in time order until none is left, letting every pending
 * promise reaction (and the next `sleep` they register) happen before time moves on.
 */

/** A virtual clock whose timers fire only when `run()` is awaited. */
export interface ManualTimers {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** Fires every timer, including those registered while it runs, in time order. */
  run(): Promise<void>;
}

/** A manual clock at 0; `lateMs` delays every timer (a late event loop). */
export function manualTimers(options: { lateMs?: number } = {}): ManualTimers {
  let now = 0;
  let sequence = 0;
  const timers: { at: number; sequence: number; resolve: () => void }[] = [];
  // A real macrotask lets every pending promise reaction run before time moves on.
  const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
  return {
    now: () => now,
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        timers.push({ at: now + ms + (options.lateMs ?? 0), sequence: sequence++, resolve });
      }),
    async run() {
      await settle();
      while (timers.length > 0) {
        timers.sort((a, b) => a.at - b.at || a.sequence - b.sequence);
        const timer = timers.shift()!;
        now = timer.at;
        timer.resolve();
        await settle();
      }
    },
  };
}
