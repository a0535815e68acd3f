/**
 * @module Scheduled traffic events (a promotion at 20:00 bringing 5× the load and a
 * different request mix): the request schema, the stored form and pure helpers.
 *
 * During [start, end) an event multiplies the forecast volume of its model (of every
 * model when `model` is absent) by `multiplier`. With a `mix`, per-request-type forecasts
 * use the event's shares instead of the observed ones. The API refuses an event that
 * overlaps another of the same model (the stored math still multiplies overlapping ones,
 * the latest-starting active event with a mix wins). Capacity for it is asked for one
 * lead time before `start`: the measured cold start (see the pre-warm job), or `lead_time`
 * when the event sets a longer one.
 */
import { z } from "zod";
import { DurationSchema } from "../../../shared/config.ts";

/** Body of `POST /api/events`. */
export const EventBodySchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  start: z.iso.datetime({ offset: true }),
  end: z.iso.datetime({ offset: true }),
  multiplier: z.number().gt(0).max(1000),
  mix: z.record(z.string().min(1).max(200), z.number().min(0).max(1)).optional(),
  lead_time: DurationSchema.optional(),
  /** The model the event concerns; absent: every model. */
  model: z.string().min(1).max(200).optional(),
}).superRefine((body, ctx) => {
  if (Date.parse(body.end) <= Date.parse(body.start)) {
    ctx.addIssue({ code: "custom", path: ["end"], message: "must be after start" });
  }
  if (body.mix !== undefined) {
    const entries = Object.values(body.mix);
    const sum = entries.reduce((total, share) => total + share, 0);
    if (entries.length === 0 || Math.abs(sum - 1) > 0.01) {
      ctx.addIssue({
        code: "custom",
        path: ["mix"],
        message: `shares must sum to 1 (±0.01), got ${Math.round(sum * 1000) / 1000}`,
      });
    }
  }
});

/** The parsed body. */
export type EventBody = z.infer<typeof EventBodySchema>;

/** A stored event (times in ms since the Unix epoch). */
export interface ScheduledEvent {
  id: string;
  name: string;
  startMs: number;
  endMs: number;
  multiplier: number;
  /** Request type → share (sums to 1); absent: the observed mix. */
  mix?: Record<string, number>;
  /** At least this lead (ms); absent: the pre-warm job's measured lead. */
  leadTimeMs?: number;
  /** Absent: every model. */
  model?: string;
  createdAt: number;
}

/** The stored form of a validated body. */
export function toScheduledEvent(
  body: EventBody,
  options: { id: string; createdAt: number },
): ScheduledEvent {
  return {
    id: options.id,
    name: body.name,
    startMs: Date.parse(body.start),
    endMs: Date.parse(body.end),
    multiplier: body.multiplier,
    ...(body.mix === undefined ? {} : { mix: body.mix }),
    ...(body.lead_time === undefined ? {} : { leadTimeMs: body.lead_time }),
    ...(body.model === undefined ? {} : { model: body.model }),
    createdAt: options.createdAt,
  };
}

/** The API form (ISO times, snake_case); `leadMs`: the lead of events that set none. */
export function eventBody(event: ScheduledEvent, leadMs: number) {
  return {
    id: event.id,
    name: event.name,
    start: new Date(event.startMs).toISOString(),
    end: new Date(event.endMs).toISOString(),
    multiplier: event.multiplier,
    mix: event.mix ?? null,
    lead_time_ms: event.leadTimeMs ?? null,
    prewarm_at: new Date(event.startMs - Math.max(leadMs, event.leadTimeMs ?? 0)).toISOString(),
    model: event.model ?? null,
    created_at: new Date(event.createdAt).toISOString(),
  };
}

/** Whether `event` concerns `model` (no model given: any event). */
export function concerns(event: ScheduledEvent, model?: string): boolean {
  return model === undefined || event.model === undefined || event.model === model;
}

/** Events active at `at` (start ≤ at < end), for `model` when given, in start order. */
export function eventsActiveAt(
  events: readonly ScheduledEvent[],
  at: number,
  model?: string,
): ScheduledEvent[] {
  return events
    .filter((e) => e.startMs <= at && at < e.endMs && concerns(e, model))
    .sort((a, b) => a.startMs - b.startMs);
}

/**
 * Events whose pre-warm window [start − lead, end) contains `at`, for `model` when given;
 * `leadMs` is the lead of events that set none.
 */
export function eventsInLeadAt(
  events: readonly ScheduledEvent[],
  at: number,
  model?: string,
  leadMs = 0,
): ScheduledEvent[] {
  return events
    .filter((e) =>
      e.startMs - Math.max(leadMs, e.leadTimeMs ?? 0) <= at && at < e.endMs && concerns(e, model)
    )
    .sort((a, b) => a.startMs - b.startMs);
}

/** Product of the multipliers of the events active at `at` (1 when none). */
export function eventMultiplier(
  events: readonly ScheduledEvent[],
  at: number,
  model?: string,
): number {
  return eventsActiveAt(events, at, model).reduce((product, e) => product * e.multiplier, 1);
}

/** The request-type mix imposed at `at` (latest-starting active event with a mix), if any. */
export function eventMixAt(
  events: readonly ScheduledEvent[],
  at: number,
  model?: string,
): Record<string, number> | undefined {
  return eventsActiveAt(events, at, model).findLast((e) => e.mix !== undefined)?.mix;
}

/** Whether two events apply to a common model at a common instant. */
export function overlaps(a: ScheduledEvent, b: ScheduledEvent): boolean {
  const sameScope = a.model === undefined || b.model === undefined || a.model === b.model;
  return sameScope && a.startMs < b.endMs && b.startMs < a.endMs;
}
