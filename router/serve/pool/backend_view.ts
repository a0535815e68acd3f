/**
 * @module A read-only snapshot of one backend, as routing policies and endpoints see it.
 */

/**
 * A member's part in the pool: `active` members take new requests and hold the plan's
 * experts; a `standby` member (started ahead of a peak by the pre-warm job) is checked and
 * staged but takes no requests until the job activates its plan; a `draining` member
 * takes no new requests and leaves once its work is done.
 */
export type BackendRole = "active" | "standby" | "draining";

/** One backend at one moment: identity, health, load and what it serves. */
export interface BackendView {
  /** Stable id: the `host:port` of its URL, e.g. `127.0.0.1:9001`. */
  readonly id: string;
  /** The backend's own id (ready `details.backend_id`), else {@linkcode BackendView.id}. */
  readonly name: string;
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:9001`. */
  readonly url: string;
  /** Passed its last health check and had no connection failure since. */
  readonly healthy: boolean;
  /** See {@linkcode BackendRole}; absent (a hand-made view): `active`. */
  readonly role?: BackendRole;
  /** Requests the router is forwarding to it right now. */
  readonly inFlight: number;
  /** Models it serves (from `GET /v2/models/{m}`). */
  readonly models: readonly string[];
  /** The `details` of its last `/v2/health/ready` answer, if any. */
  readonly details: Readonly<Record<string, unknown>> | undefined;
  /** When it was last checked (clock ms), if ever. */
  readonly checkedAt: number | undefined;
  /** Why it is unhealthy, if it is. */
  readonly lastError: string | undefined;
}
