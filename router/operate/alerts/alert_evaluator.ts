/**
 * @module Hysteresis for alerts: a condition fires after it held `raiseAfter`
 * consecutive rounds and resolves after it was absent `clearAfter` consecutive rounds,
 * so a condition that comes and goes does not flap.
 *
 * Pure: state in, state out; the round's time is passed in. Per condition id the state
 * counts consecutive present and absent rounds and holds the firing alert, if any. A
 * pending condition (not yet fired) that disappears is forgotten at once; a resolved
 * alert is forgotten, and firing again needs `raiseAfter` fresh rounds.
 */
import type { Alert } from "./alert_types.ts";
import type { AlertCondition } from "./alert_conditions.ts";

/** What the evaluator remembers of one condition. */
export interface AlertTrack {
  /** Consecutive rounds it held (0 while absent). */
  present: number;
  /** Consecutive rounds it was absent (0 while present). */
  absent: number;
  /** The firing alert, once fired. */
  alert: Alert | undefined;
}

/** The evaluator's state: tracks by condition id. */
export type AlertState = ReadonlyMap<string, AlertTrack>;

/** Hysteresis knobs and the round's time. */
export interface EvaluateOptions {
  /** Router clock ms of this round. */
  now: number;
  raiseAfter: number;
  clearAfter: number;
}

/** The outcome of one round. */
export interface AlertRound {
  state: AlertState;
  /** Alerts that fired this round. */
  fired: Alert[];
  /** Alerts that resolved this round (state `resolved`). */
  resolved: Alert[];
  /** Every alert firing after this round, oldest first. */
  active: Alert[];
}

function checkOptions(options: EvaluateOptions): void {
  for (const name of ["raiseAfter", "clearAfter"] as const) {
    const value = options[name];
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`Cannot evaluate alerts: ${name} must be an integer >= 1, got ${value}`);
    }
  }
}

function fire(condition: AlertCondition, now: number): Alert {
  return {
    id: condition.id,
    kind: condition.kind,
    subject: condition.subject,
    state: "firing",
    firedAt: now,
    resolvedAt: undefined,
    value: condition.value,
    threshold: condition.threshold,
    message: condition.message,
  };
}

/** Applies one round's conditions to `state`. */
export function evaluateAlerts(
  state: AlertState,
  conditions: readonly AlertCondition[],
  options: EvaluateOptions,
): AlertRound {
  checkOptions(options);
  const { now, raiseAfter, clearAfter } = options;
  const next = new Map<string, AlertTrack>();
  const fired: Alert[] = [];
  const resolved: Alert[] = [];
  // Step 1: conditions that hold — count up, fire at raiseAfter, refresh a firing value.
  const present = new Map(conditions.map((condition) => [condition.id, condition]));
  for (const condition of present.values()) {
    const track = state.get(condition.id);
    const count = (track?.present ?? 0) + 1;
    let alert = track?.alert;
    if (alert === undefined && count >= raiseAfter) {
      alert = fire(condition, now);
      fired.push(alert);
    } else if (alert !== undefined) {
      alert = { ...alert, value: condition.value, message: condition.message };
    }
    next.set(condition.id, { present: count, absent: 0, alert });
  }
  // Step 2: tracked conditions that are gone — forget pending ones, resolve after clearAfter.
  for (const [id, track] of state) {
    if (present.has(id) || track.alert === undefined) continue;
    const absent = track.absent + 1;
    if (absent >= clearAfter) {
      resolved.push({ ...track.alert, state: "resolved", resolvedAt: now });
      continue;
    }
    next.set(id, { present: 0, absent, alert: track.alert });
  }
  const active = [...next.values()].flatMap((track) => track.alert ? [track.alert] : [])
    .sort((a, b) => a.firedAt - b.firedAt || a.id.localeCompare(b.id));
  return { state: next, fired, resolved, active };
}
