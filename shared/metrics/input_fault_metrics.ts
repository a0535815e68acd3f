/**
 * @module `switchyard_input_faults_total{kind}` on router and backend: clients that
 * disconnected mid-body and bodies that missed the read timeout (see `read_body.ts`).
 */
import type { Registry } from "prom-client";
import { INPUT_FAULT_KINDS, type InputFaults } from "../input_faults.ts";
import { collectedCounter } from "./collected.ts";

/** Registers the counter, read from `faults` at scrape time. */
export function inputFaultMetrics(registry: Registry, faults: InputFaults): void {
  collectedCounter(registry, {
    name: "switchyard_input_faults_total",
    help:
      "Request bodies that never arrived whole, by kind: client_disconnected (the client closed mid-body) or body_timeout (408 after limits.body_timeout) or body_evicted (408: a newer request took its router.admission.max_body_readers slot).",
    labelNames: ["kind"],
    read: () => INPUT_FAULT_KINDS.map((kind) => ({ labels: { kind }, value: faults.count(kind) })),
  });
}
