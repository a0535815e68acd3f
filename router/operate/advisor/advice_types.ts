/**
 * @module What the advisor says: one recommendation per topic, each with the evidence
 * it rests on, the expected effect and the risk, and whether it can be applied live.
 */

/** The topics the advisor covers. */
export type AdviceId =
  | "replacement"
  | "batching"
  | "gate_temperature"
  | "gate_bias"
  | "scaling";

/** One recommendation (or the finding that nothing should change). */
export interface Advice {
  id: AdviceId;
  title: string;
  /** True when the advisor recommends acting; false when the finding is "leave it". */
  recommended: boolean;
  /** Measured facts the advice rests on, as short sentences. */
  evidence: string[];
  expectedEffect: string;
  risk: string;
  /**
   * `live`: `POST /api/advice/apply` carries it out now (admin); `config`: change the
   * named settings and restart; `none`: informational.
   */
  apply: "live" | "config" | "none";
  /** The settings to change for `config` advice, e.g. `{ "batching.max": 32 }`. */
  settings?: Record<string, number | string>;
  /** Numbers behind the advice, for tools and the dashboard. */
  details: Record<string, unknown>;
}
