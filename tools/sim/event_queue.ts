/**
 * @module The simulator's event queue: a binary min-heap ordered by virtual time, ties
 * broken by insertion order, so a run is a pure function of its inputs and seed.
 */

/** One scheduled event. */
export interface Scheduled<T> {
  /** Virtual time, ms. */
  at: number;
  /** Insertion number: equal times pop in the order they were pushed. */
  seq: number;
  event: T;
}

/** A min-heap of events by `(at, seq)`. */
export class EventQueue<T> {
  readonly #heap: Scheduled<T>[] = [];
  #seq = 0;

  /** Events waiting. */
  get size(): number {
    return this.#heap.length;
  }

  /** Schedules `event` at virtual time `at` (ms, finite). */
  push(at: number, event: T): void {
    if (!Number.isFinite(at)) throw new RangeError(`Cannot schedule an event at ${at}`);
    const heap = this.#heap;
    heap.push({ at, seq: this.#seq++, event });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  /** The earliest event without removing it, or undefined. */
  peek(): Scheduled<T> | undefined {
    return this.#heap[0];
  }

  /** Removes and returns the earliest event, or undefined when empty. */
  pop(): Scheduled<T> | undefined {
    const heap = this.#heap;
    const top = heap[0];
    if (top === undefined) return undefined;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
        if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
        i = smallest;
      }
    }
    return top;
  }
}

function before<T>(a: Scheduled<T>, b: Scheduled<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
