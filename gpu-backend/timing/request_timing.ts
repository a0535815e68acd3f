/**
 * @module Where one inference request's time went on a backend: the phases of its
 * `Server-Timing` header and of `switchyard_backend_request_phase_seconds`.
 *
 * Phases on the request's critical path add up to its time in the backend:
 * `decode` (body → tensor), `queue` (its executions waited while every execution place
 * was taken), `batch` (waited while a place was free: the batch filling), `exec` (the
 * executions' own time), `handoff` (dispatch → result minus `exec`: the hand-off to an
 * executor Worker and back), `hop` (a layer's peer rows still in flight after the local
 * work finished), `encode` (tensor → answer) and `host` (the rest: routing math,
 * gathering and combining rows). `hop-hidden` is hop time spent while the request's own
 * local work ran — off the critical path, and the point of overlapping the two.
 */
import type { BatchInfo } from "../batching/batch_queues.ts";
import type { TimingMetric } from "../../shared/server_timing.ts";

/** One layer's hop to its peers, seen from the entry backend. */
export interface HopInfo {
  /** Peers the layer's rows went to. */
  peers: number;
  /** Unique rows sent. */
  rows: number;
  /** From sending to the last peer's answer (ms). */
  wallMs: number;
  /** The part of `wallMs` the request waited with none of its own local work running. */
  exposedMs: number;
  /** The longest time a peer reported serving the rows (its queue and execution, ms). */
  peerMs: number;
}

/** Phases of the backend's request-phase histogram. */
export const BACKEND_PHASES = [
  "decode",
  "queue",
  "batch",
  "exec",
  "handoff",
  "hop",
  "hop_hidden",
  "encode",
  "host",
  "total",
] as const;

/** A backend phase. */
export type BackendPhase = typeof BACKEND_PHASES[number];

/** Accumulates one request's phases. */
export class RequestTiming {
  readonly #startedAt: number;
  readonly #now: () => number;
  readonly ms: Record<BackendPhase, number> = {
    decode: 0,
    queue: 0,
    batch: 0,
    exec: 0,
    handoff: 0,
    hop: 0,
    hop_hidden: 0,
    encode: 0,
    host: 0,
    total: 0,
  };
  #hopLayers = 0;
  #hopRows = 0;
  #peerMs = 0;
  #hopWallMs = 0;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#startedAt = now();
  }

  /** Milliseconds since the request started. */
  elapsed(): number {
    return this.#now() - this.#startedAt;
  }

  /** Adds `ms` to a phase measured by the caller (decode, encode). */
  add(phase: "decode" | "encode", ms: number): void {
    this.ms[phase] += ms;
  }

  /** Adds one execution the request took part in. */
  batch(info: BatchInfo): void {
    this.ms.queue += info.queueMs;
    this.ms.batch += info.batchMs;
    this.ms.exec += info.execMs;
    this.ms.handoff += Math.max(info.runMs - info.execMs, 0);
  }

  /** Adds one layer's hop. */
  hop(info: HopInfo): void {
    this.#hopLayers++;
    this.#hopRows += info.rows;
    this.#hopWallMs += info.wallMs;
    this.#peerMs += info.peerMs;
    this.ms.hop += info.exposedMs;
    this.ms.hop_hidden += info.wallMs - info.exposedMs;
  }

  /** Closes the request: `total` and `host` (the unattributed rest) are set. */
  finish(): Record<BackendPhase, number> {
    const ms = this.ms;
    ms.total = this.elapsed();
    const attributed = ms.decode + ms.queue + ms.batch + ms.exec + ms.handoff + ms.hop +
      ms.encode;
    ms.host = Math.max(ms.total - attributed, 0);
    return ms;
  }

  /** The `Server-Timing` metrics (call after {@linkcode finish}). */
  metrics(): TimingMetric[] {
    const ms = this.ms;
    const hopDesc = this.#hopLayers === 0
      ? "no layer crossed backends"
      : `${this.#hopLayers} layer(s), ${this.#hopRows} row(s), wall ${
        this.#hopWallMs.toFixed(3)
      } ms, peers serving ${this.#peerMs.toFixed(3)} ms, wire ${
        Math.max(this.#hopWallMs - this.#peerMs, 0).toFixed(3)
      } ms`;
    return [
      { name: "decode", ms: ms.decode },
      { name: "queue", ms: ms.queue, desc: "waited for a busy executor" },
      { name: "batch", ms: ms.batch, desc: "waited for the micro-batch to fill" },
      { name: "exec", ms: ms.exec, desc: "executions" },
      { name: "handoff", ms: ms.handoff, desc: "to the executor and back" },
      { name: "hop", ms: ms.hop, desc: hopDesc },
      { name: "hop-hidden", ms: ms.hop_hidden, desc: "hop time under local work" },
      { name: "encode", ms: ms.encode },
      { name: "host", ms: ms.host, desc: "routing, gathering, combining" },
      { name: "backend", ms: ms.total },
    ];
  }
}
