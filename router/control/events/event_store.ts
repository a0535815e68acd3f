/**
 * @module Scheduled events in Deno KV under `["events", id]`. Ids are time-ordered
 * (creation ms, zero-padded, plus a random suffix) so listing returns creation order.
 */
import { concerns, type ScheduledEvent } from "./scheduled_event.ts";

/** KV key prefix of the events. */
export const EVENTS_PREFIX = ["events"] as const;

/** Options of {@linkcode EventStore}. */
export interface EventStoreOptions {
  /** Random suffix of new ids; default 8 hex digits from `crypto.getRandomValues`. */
  randomSuffix?: () => string;
}

function defaultSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Creates, lists, reads and deletes scheduled events. */
export class EventStore {
  readonly #kv: Deno.Kv;
  readonly #suffix: () => string;

  constructor(kv: Deno.Kv, options: EventStoreOptions = {}) {
    this.#kv = kv;
    this.#suffix = options.randomSuffix ?? defaultSuffix;
  }

  /** A fresh id for an event created at `createdAt`. */
  newId(createdAt: number): string {
    return `ev-${String(createdAt).padStart(15, "0")}-${this.#suffix()}`;
  }

  /** Stores `event`; fails (returns false) when its id exists. */
  async create(event: ScheduledEvent): Promise<boolean> {
    const key = [...EVENTS_PREFIX, event.id];
    const result = await this.#kv.atomic().check({ key, versionstamp: null }).set(key, event)
      .commit();
    return result.ok;
  }

  /** Every event, in creation order. */
  async list(): Promise<ScheduledEvent[]> {
    const events: ScheduledEvent[] = [];
    for await (const entry of this.#kv.list<ScheduledEvent>({ prefix: EVENTS_PREFIX })) {
      events.push(entry.value);
    }
    return events;
  }

  /** Events that have not ended at `now`, for `model` when given, in start order. */
  async upcoming(now: number, model?: string): Promise<ScheduledEvent[]> {
    return (await this.list())
      .filter((e) => e.endMs > now && concerns(e, model))
      .sort((a, b) => a.startMs - b.startMs);
  }

  /** The event `id`, or `null`. */
  async get(id: string): Promise<ScheduledEvent | null> {
    return (await this.#kv.get<ScheduledEvent>([...EVENTS_PREFIX, id])).value;
  }

  /** Deletes event `id`; returns what was deleted, or `null` when there was none. */
  async delete(id: string): Promise<ScheduledEvent | null> {
    const key = [...EVENTS_PREFIX, id];
    const entry = await this.#kv.get<ScheduledEvent>(key);
    if (entry.value === null) return null;
    const result = await this.#kv.atomic().check(entry).delete(key).commit();
    return result.ok ? entry.value : null;
  }
}

/** A scheduled event as the pre-warm job reads it (times in ms since the epoch). */
export interface PrewarmEvent {
  name: string;
  start: number;
  end: number;
  /** Expected volume multiplier while active (5 = five times the usual load). */
  multiplier: number;
  /** Request-type mix while active (shares, any scale); absent: the observed mix. */
  mix?: Record<string, number> | undefined;
  /** At least this lead before `start` (ms); absent: the job's (measured) lead. */
  leadTimeMs?: number | undefined;
}

/** The store as the pre-warm job's event source: `upcoming(now)` in its shape. */
export function prewarmEventSource(
  store: EventStore,
): { upcoming(now: number): Promise<PrewarmEvent[]> } {
  return {
    upcoming: async (now) =>
      (await store.upcoming(now)).map((e) => ({
        name: e.name,
        start: e.startMs,
        end: e.endMs,
        multiplier: e.multiplier,
        ...(e.mix === undefined ? {} : { mix: e.mix }),
        ...(e.leadTimeMs === undefined ? {} : { leadTimeMs: e.leadTimeMs }),
      })),
  };
}
