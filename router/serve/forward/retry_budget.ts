/**
 * @module The retry budget: retries may add at most `ratio` of the requests seen over
 * the last `windowMs` (at least `minPerSecond` per second of the window), so retries
 * cannot amplify an overload (pure; time comes from the caller).
 *
 * Counts live in one-second buckets; a bucket older than the window no longer counts.
 */

/** Settings of {@linkcode RetryBudget} (`router.retry`). */
export interface RetryBudgetSettings {
  ratio: number;
  minPerSecond: number;
  /** Sliding window; default 10 s. */
  windowMs?: number;
}

const BUCKET_MS = 1000;

/** Requests and retries over a sliding window of one-second buckets. */
export class RetryBudget {
  readonly #ratio: number;
  readonly #minPerSecond: number;
  readonly #buckets: number;
  /** bucket index (time / 1 s) → [requests, retries]. */
  readonly #counts = new Map<number, [number, number]>();
  #refused = 0;

  constructor(settings: RetryBudgetSettings) {
    this.#ratio = settings.ratio;
    this.#minPerSecond = settings.minPerSecond;
    this.#buckets = Math.max(1, Math.round((settings.windowMs ?? 10_000) / BUCKET_MS));
  }

  #bucket(now: number): [number, number] {
    const index = Math.floor(now / BUCKET_MS);
    for (const key of this.#counts.keys()) {
      if (key <= index - this.#buckets) this.#counts.delete(key);
    }
    let bucket = this.#counts.get(index);
    if (bucket === undefined) {
      bucket = [0, 0];
      this.#counts.set(index, bucket);
    }
    return bucket;
  }

  /** Counts one request (its first attempt). */
  request(now: number): void {
    this.#bucket(now)[0]++;
  }

  /** Whether one more retry fits; when it does, it is counted. */
  tryRetry(now: number): boolean {
    const current = this.#bucket(now);
    const { requests, retries } = this.window(now);
    const allowed = Math.max(this.#minPerSecond * this.#buckets, this.#ratio * requests);
    if (retries + 1 > allowed) {
      this.#refused++;
      return false;
    }
    current[1]++;
    return true;
  }

  /** Requests and retries counted in the window ending at `now`. */
  window(now: number): { requests: number; retries: number } {
    const index = Math.floor(now / BUCKET_MS);
    let requests = 0;
    let retries = 0;
    for (const [key, [req, ret]] of this.#counts) {
      if (key > index - this.#buckets && key <= index) {
        requests += req;
        retries += ret;
      }
    }
    return { requests, retries };
  }

  /** Retries refused so far. */
  get refused(): number {
    return this.#refused;
  }
}
