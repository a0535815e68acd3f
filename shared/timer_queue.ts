/**
 * @module One-shot timers for the request path, many on one runtime timer.
 *
 * Every inference request arms a body-read timeout and a per-attempt timeout and almost
 * always clears both within milliseconds. A runtime timer per timeout costs a timer
 * object, a list insertion and its removal each time; here a timeout is an entry in a
 * min-heap ordered by due time (then by arming order, as runtime timers of equal due
 * time fire), clearing one only marks it, and one runtime timer is armed for the
 * earliest entry still armed. When it fires, due entries run in order, cleared ones on
 * top are dropped, and it is re-armed for the next armed entry; with no armed entry left
 * the runtime timer is cleared (nothing keeps the process alive) and the heap emptied.
 * An entry fires no earlier than its delay after it was armed, like `setTimeout`.
 */

/** A timer handle of {@linkcode TimerQueue}. */
export interface QueuedTimer {
  readonly due: number;
  readonly seq: number;
  callback: (() => void) | undefined;
}

/** What the queue runs on: a monotonic clock in ms and the runtime's one-shot timers. */
export interface TimerQueueRuntime {
  now(): number;
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real runtime: `performance.now()` and the global timers. */
export const REAL_RUNTIME: TimerQueueRuntime = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

function earlier(a: QueuedTimer, b: QueuedTimer): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

/** Many one-shot timers on one runtime timer (see the module comment). */
export class TimerQueue {
  readonly #runtime: TimerQueueRuntime;
  #heap: QueuedTimer[] = [];
  #armed = 0;
  #seq = 0;
  #handle: unknown = undefined;
  /** Due time the runtime timer is set for (Infinity: not set). */
  #at = Infinity;

  constructor(runtime: TimerQueueRuntime = REAL_RUNTIME) {
    this.#runtime = runtime;
  }

  /** Timers armed and not yet fired or cleared. */
  get armed(): number {
    return this.#armed;
  }

  /** Runs `callback` once, `delayMs` (at least 0) from now; returns its handle. */
  setTimeout(callback: () => void, delayMs: number): QueuedTimer {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    const timer: QueuedTimer = { due: this.#runtime.now() + delay, seq: this.#seq++, callback };
    this.#push(timer);
    this.#armed++;
    if (timer.due < this.#at) this.#arm(timer.due);
    return timer;
  }

  /** Cancels a timer; fired, cleared or foreign handles are ignored. */
  clearTimeout(handle: unknown): void {
    const timer = handle as QueuedTimer | undefined;
    if (timer?.callback === undefined) return;
    timer.callback = undefined;
    if (--this.#armed > 0) return;
    // Nothing armed: no runtime timer, and the cleared entries go at once.
    this.#runtime.clearTimeout(this.#handle);
    this.#handle = undefined;
    this.#at = Infinity;
    this.#heap = [];
  }

  #arm(due: number): void {
    if (this.#handle !== undefined) this.#runtime.clearTimeout(this.#handle);
    this.#at = due;
    const delay = Math.max(0, Math.ceil(due - this.#runtime.now()));
    this.#handle = this.#runtime.setTimeout(() => this.#fire(), delay);
  }

  #fire(): void {
    this.#handle = undefined;
    this.#at = Infinity;
    const now = this.#runtime.now();
    const due: (() => void)[] = [];
    for (;;) {
      const top = this.#heap[0];
      if (top === undefined) break;
      if (top.callback !== undefined) {
        if (top.due > now) break;
        due.push(top.callback);
        top.callback = undefined;
        this.#armed--;
      }
      this.#pop();
    }
    const next = this.#heap[0];
    if (next !== undefined) this.#arm(next.due);
    else this.#heap = [];
    for (const callback of due) {
      try {
        callback();
      } catch (error) {
        // As from a runtime timer: uncaught, without keeping the others from running.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  #push(timer: QueuedTimer): void {
    const heap = this.#heap;
    let i = heap.length;
    heap.push(timer);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!earlier(timer, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = timer;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && earlier(heap[right]!, heap[left]!) ? right : left;
      if (!earlier(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}

/** The process's queue on the runtime's timers (request-path timeouts). */
export const requestTimers: TimerQueue = new TimerQueue();
