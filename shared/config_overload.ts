/**
 * @module Config sections of the router's overload and fault handling: outlier
 * detection (`router.outlier`), admission (`router.admission`) and retries
 * (`router.retry`). Every field has a default; docs/OPERATIONS.md's config table lists them.
 */
import { z } from "zod";
import { DurationSchema } from "./duration.ts";

/** `router.outlier`: when a backend leaves and rejoins rotation. */
export const OutlierSchema = z.object({
  /** Consecutive failures (probes and real traffic) that eject a backend. */
  eject_after: z.int().min(1).max(100).default(3),
  /** Consecutive passing probes that bring an ejected backend back. */
  readmit_after: z.int().min(1).max(100).default(2),
  /**
   * Panic threshold: when fewer than this share of the pool is in rotation, route to
   * every backend that serves the model (ejected ones too) rather than to almost none.
   */
  panic_threshold: z.number().min(0).max(1).default(0.5),
  /**
   * A timeout is not held against a backend when the router's own event loop was this
   * late (or later) while waiting for it: the router was busy, not the backend.
   */
  lag_allowance: DurationSchema.default(200),
}).prefault({});

/** `router.admission`: bounded work in flight; beyond it 429 with Retry-After at once. */
export const AdmissionSchema = z.object({
  /** Inference requests this router handles at once (reading, validating, forwarding). */
  max_in_flight: z.int().min(1).max(1_000_000).default(256),
  /** Requests this router forwards to one backend at once. */
  max_in_flight_per_backend: z.int().min(1).max(1_000_000).default(64),
  /**
   * Request bodies this router reads at once, apart from `max_in_flight` (a request takes
   * its in-flight slot once its body is whole). Buffered bodies stay within this times
   * `limits.max_body_bytes`.
   */
  max_body_readers: z.int().min(1).max(1_000_000).default(256),
  /**
   * With every reader slot taken, a read at least this old gives its slot to a new
   * request (408); when none is, the new request gets 429.
   */
  reader_grace: DurationSchema.default(1000),
}).prefault({});

/** `router.retry`: per-try timeout and the retry budget (within `router.request_timeout`). */
export const RetrySchema = z.object({
  /** Limit of one attempt; a timed-out attempt is retried on another backend. */
  try_timeout: DurationSchema.default(5000),
  /** Retries allowed as a share of requests over the last 10 s. */
  budget_ratio: z.number().min(0).max(1).default(0.2),
  /** Retries always allowed per second, whatever the ratio (a quiet router can retry). */
  budget_min_per_second: z.number().min(0).max(10_000).default(3),
}).prefault({});
