/**
 * @module The router's bound on request bodies being read (`router.admission.max_body_readers`),
 * separate from the bound on requests in flight: a request takes a reader slot while its
 * body arrives and an in-flight slot only once the body is whole, so slow bodies cannot
 * crowd valid requests out of `max_in_flight`. Buffered body memory stays within
 * `max_body_readers × limits.max_body_bytes`.
 *
 * When every reader slot is taken, a new request takes the slot of the oldest read that
 * has lasted at least `router.admission.reader_grace` (that read is aborted and answered
 * 408, like a body timeout, only sooner); when none is that old, the new request is shed
 * with 429 and Retry-After. Under a slow-body flood, requests whose bodies arrive at once
 * keep getting through.
 */
import type { Clock } from "../../runtime/clock.ts";

/** Settings of {@linkcode BodyReaders}. */
export interface BodyReadersSettings {
  /** Bodies read at once. */
  maxReaders: number;
  /** A read at least this old (ms) gives its slot up to a new request when all are taken. */
  graceMs: number;
}

/** One body being read: abort means "evicted", release when the read ends (any way). */
export interface ReaderSlot {
  readonly signal: AbortSignal;
  release(): void;
}

interface Reader {
  started: number;
  controller: AbortController;
}

/** Reader slots in start order (the first is the oldest), eviction and its counts. */
export class BodyReaders {
  readonly settings: BodyReadersSettings;
  readonly #clock: Clock;
  readonly #readers = new Set<Reader>();
  #evicted = 0;

  constructor(settings: BodyReadersSettings, clock: Clock) {
    this.settings = settings;
    this.#clock = clock;
  }

  /** Bodies being read now. */
  get reading(): number {
    return this.#readers.size;
  }

  /** Reads aborted so far to make room for a newer request. */
  get evicted(): number {
    return this.#evicted;
  }

  /**
   * A slot for one body read, evicting the oldest read past the grace when all are
   * taken; `undefined` when all are taken by younger reads (the caller sheds).
   */
  tryEnter(): ReaderSlot | undefined {
    const now = this.#clock.now();
    if (this.#readers.size >= this.settings.maxReaders) {
      const oldest = this.#readers.values().next().value;
      if (oldest === undefined || now - oldest.started < this.settings.graceMs) return undefined;
      this.#readers.delete(oldest);
      this.#evicted++;
      oldest.controller.abort(
        `Cannot read request body: it had not arrived after ${
          Math.round(now - oldest.started)
        } ms while all router.admission.max_body_readers (${this.settings.maxReaders}) slots were taken; a newer request took its slot`,
      );
    }
    const reader: Reader = { started: now, controller: new AbortController() };
    this.#readers.add(reader);
    return {
      signal: reader.controller.signal,
      release: () => void this.#readers.delete(reader),
    };
  }
}
