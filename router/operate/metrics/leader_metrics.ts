/**
 * @module Router metrics about the leader lease, read at scrape time from this router's
 * view of it: `switchyard_leader` (1 when this router leads), `switchyard_leader_term`
 * (the lease's term as last read, whoever holds it) and
 * `switchyard_leader_lease_renewal_age_seconds` (time since the holder last renewed:
 * a dead leader's age grows on every follower until one takes over), and
 * `switchyard_plan_calls_refused_total` (backends refused this router's plan calls: another
 * controller steers the pool, or a newer term of ours does). The Prometheus rule
 * `SwitchyardNoLeader` (deploy/prometheus/rules.yml) fires when no router leads for 30 s.
 */
import type { Registry } from "prom-client";
import {
  collectedCounter,
  collectedGauge,
  type Sample,
} from "../../../shared/metrics/collected.ts";

/** This router's view of the lease (`Fleet.leadership()`). */
export interface LeadershipSource {
  leadership(): { leader: boolean; term: number | null; renewalAgeMs: number | null };
  /** Plan calls backends refused as from another pool or an older term; absent: not counted. */
  refusedPlanCalls?: () => number;
}

function optional(value: number | null): Sample<never>[] {
  return value === null ? [] : [{ labels: {}, value }];
}

/** Registers the leader metrics on `registry`. */
export function leaderMetrics(registry: Registry, source: LeadershipSource): void {
  collectedGauge(registry, {
    name: "switchyard_leader",
    help: "1 when this router holds the leader lease and runs the control loops, else 0.",
    read: () => [{ labels: {}, value: source.leadership().leader ? 1 : 0 }],
  });
  collectedGauge(registry, {
    name: "switchyard_leader_term",
    help:
      "Term of the leader lease as this router last read it, whoever holds it (absent: no lease).",
    read: () => optional(source.leadership().term),
  });
  collectedGauge(registry, {
    name: "switchyard_leader_lease_renewal_age_seconds",
    help: "Seconds since the lease holder last renewed the lease, as this router last read it " +
      "(absent: no lease); grows past leader.ttl while nobody leads.",
    read: () => {
      const age = source.leadership().renewalAgeMs;
      return optional(age === null ? null : age / 1000);
    },
  });
  const refused = source.refusedPlanCalls;
  if (refused === undefined) return;
  collectedCounter(registry, {
    name: "switchyard_plan_calls_refused_total",
    help: "Plan calls of this router that backends refused (409) because they follow another " +
      "pool or a newer term: another controller steers the pool.",
    read: () => [{ labels: {}, value: refused() }],
  });
}
