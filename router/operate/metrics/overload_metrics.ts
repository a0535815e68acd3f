/**
 * @module Router metrics about overload and faults, read at scrape time: ejections by
 * reason, timeouts excused by the router's own lag, panic routing, the event-loop lag,
 * requests shed by reason, retries by cause and retries the budget refused, and the
 * requests in flight and the bodies being read, and the `node` front's connections. The `*Samples` functions are pure; {@linkcode overloadMetrics}
 * registers them.
 */
import type { Registry } from "prom-client";
import {
  collectedCounter,
  collectedGauge,
  type Sample,
} from "../../../shared/metrics/collected.ts";
import { SHED_REASONS, type ShedReason } from "../../serve/admission/admission.ts";
import type { RetryCause } from "../../serve/forward/forward_infer.ts";
import { FAILURE_KINDS, type FailureKind } from "../../serve/health/outlier_detector.ts";
import type { FrontCounts } from "../../serve/front/node_server.ts";

/** What {@linkcode overloadMetrics} reads. */
export interface OverloadSource {
  ejections(): ReadonlyMap<FailureKind, number>;
  excused(): number;
  panic(): boolean;
  /** Largest event-loop lag over the monitor's window, ms. */
  lagMs(): number;
  sheds(): ReadonlyMap<ShedReason, number>;
  retries(): ReadonlyMap<RetryCause, number>;
  retriesRefused(): number;
  inFlight(): number;
  /** Request bodies being read (`router.admission.max_body_readers` slots taken). */
  bodyReaders(): number;
  /** The `node` front's connection counts; undefined on `Deno.serve` (none exported). */
  connections?(): FrontCounts | undefined;
}

/** Why the front closed a connection itself. */
export const CONNECTION_CLOSE_REASONS = [
  "refused",
  "header_timeout",
  "idle",
  "unread_body",
] as const;

/** Samples of `switchyard_router_connections_closed_total`; none without a `node` front. */
export function connectionCloseSamples(counts: FrontCounts | undefined): Sample<"reason">[] {
  if (counts === undefined) return [];
  const values: Record<(typeof CONNECTION_CLOSE_REASONS)[number], number> = {
    refused: counts.refused,
    header_timeout: counts.headerTimeouts,
    idle: counts.idleTimeouts,
    unread_body: counts.closedUnread,
  };
  return CONNECTION_CLOSE_REASONS.map((reason) => ({ labels: { reason }, value: values[reason] }));
}

const RETRY_CAUSES: readonly RetryCause[] = ["timeout", "unreachable", "ejected"];

/** One sample per label value, 0 for values never counted. */
export function countSamples<K extends string, L extends string>(
  label: L,
  keys: readonly K[],
  counts: ReadonlyMap<K, number>,
): Sample<L>[] {
  return keys.map((key) => ({
    labels: { [label]: key } as unknown as Record<L, string>,
    value: counts.get(key) ?? 0,
  }));
}

/** Registers the overload metrics on `registry`. */
export function overloadMetrics(registry: Registry, source: OverloadSource): void {
  collectedCounter(registry, {
    name: "switchyard_router_ejections_total",
    help: "Backends taken out of rotation by outlier detection, by the failure that ejected them.",
    labelNames: ["reason"],
    read: () => countSamples("reason", FAILURE_KINDS, source.ejections()),
  });
  collectedCounter(registry, {
    name: "switchyard_router_timeouts_excused_total",
    help: "Backend timeouts not counted because the router's own event loop was late.",
    read: () => [{ labels: {}, value: source.excused() }],
  });
  collectedGauge(registry, {
    name: "switchyard_router_panic",
    help: "1 while fewer than router.outlier.panic_threshold of the backends are in rotation.",
    read: () => [{ labels: {}, value: source.panic() ? 1 : 0 }],
  });
  collectedGauge(registry, {
    name: "switchyard_router_event_loop_lag_seconds",
    help: "Largest lateness of the router's event-loop timer over the last 10 s.",
    read: () => [{ labels: {}, value: source.lagMs() / 1000 }],
  });
  collectedCounter(registry, {
    name: "switchyard_router_shed_total",
    help: "Inference requests shed at admission, by reason (429 or 503 with Retry-After).",
    labelNames: ["reason"],
    read: () => countSamples("reason", SHED_REASONS, source.sheds()),
  });
  collectedCounter(registry, {
    name: "switchyard_router_retries_total",
    help: "Inference attempts retried on another backend, by why the attempt before failed.",
    labelNames: ["cause"],
    read: () => countSamples("cause", RETRY_CAUSES, source.retries()),
  });
  collectedCounter(registry, {
    name: "switchyard_router_retries_refused_total",
    help: "Retries the retry budget refused.",
    read: () => [{ labels: {}, value: source.retriesRefused() }],
  });
  collectedGauge(registry, {
    name: "switchyard_router_in_flight_requests",
    help: "Inference requests this router has admitted and not yet answered.",
    read: () => [{ labels: {}, value: source.inFlight() }],
  });
  collectedGauge(registry, {
    name: "switchyard_router_body_readers",
    help: "Inference request bodies being read (router.admission.max_body_readers slots taken).",
    read: () => [{ labels: {}, value: source.bodyReaders() }],
  });
  collectedGauge(registry, {
    name: "switchyard_router_connections",
    help: "Client connections open (router.http_server: node; capped by router.max_connections).",
    read: () => {
      const counts = source.connections?.();
      return counts === undefined ? [] : [{ labels: {}, value: counts.open }];
    },
  });
  collectedCounter(registry, {
    name: "switchyard_router_connections_closed_total",
    help:
      "Client connections the router closed itself, by reason: refused (router.max_connections open), header_timeout (no whole request head within router.header_timeout), idle (keep-alive, no new request within router.idle_timeout), unread_body (answered before the body was whole and not kept: 408, 413, or a body not discarded whole within router.header_timeout).",
    labelNames: ["reason"],
    read: () => connectionCloseSamples(source.connections?.()),
  });
}
