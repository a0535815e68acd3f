/**
 * @module Counts of client faults on the input path that are not errors of the server:
 * a client that disconnected mid-body, a body that did not arrive within the read
 * timeout, a slow body whose reader slot a newer request took (router only). Router and backend export them as `switchyard_input_faults_total{kind}`.
 */

/** Kinds of input faults counted. */
export const INPUT_FAULT_KINDS = ["client_disconnected", "body_timeout", "body_evicted"] as const;

/** One of {@linkcode INPUT_FAULT_KINDS}. */
export type InputFaultKind = typeof INPUT_FAULT_KINDS[number];

/** A counter per kind; cheap to bump on the hot path. */
export class InputFaults {
  readonly #counts = new Map<InputFaultKind, number>(INPUT_FAULT_KINDS.map((k) => [k, 0]));

  /** Counts one fault. */
  record(kind: InputFaultKind): void {
    this.#counts.set(kind, (this.#counts.get(kind) ?? 0) + 1);
  }

  /** The count of one kind so far. */
  count(kind: InputFaultKind): number {
    return this.#counts.get(kind) ?? 0;
  }
}
