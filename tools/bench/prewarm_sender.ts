/**
 * @module The pre-warm benchmark's open-loop sender: Poisson arrivals at a rate that follows
 * the replay, each request's latency measured from its scheduled send (so a sender that
 * falls behind counts its own delay), answers recorded as they come.
 */
import type { SentRequest } from "./prewarm_report.ts";
import type { EncodedRequest } from "./prewarm_workload.ts";

/** An open-loop sender: Poisson arrivals, answers recorded as they come, never waited for in between. */
export class Sender {
  readonly sent: SentRequest[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #url: string;
  readonly #model: string;
  #cursor = 0;

  constructor(url: string, model: string) {
    this.#url = url;
    this.#model = model;
  }

  /** Sends at `rps()` real req/s until real instant `end`; `pick()` chooses each request. */
  async until(
    end: number,
    pick: () => EncodedRequest[],
    rps: () => number,
    simNow: () => number,
    random: () => number,
  ): Promise<void> {
    let next = performance.now();
    while (next < end) {
      const wait = next - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
      const list = pick();
      const request = list[this.#cursor++ % list.length]!;
      const scheduled = next;
      const sim = simNow();
      const task = fetch(`${this.#url}/v2/models/${this.#model}/infer`, {
        method: "POST",
        body: request.body,
        headers: request.headers,
      }).then(async (response) => {
        await response.arrayBuffer();
        this.sent.push({ sim, latencyMs: performance.now() - scheduled, status: response.status });
      }, () => {
        this.sent.push({ sim, latencyMs: performance.now() - scheduled, status: 0 });
      }).finally(() => this.#inFlight.delete(task));
      this.#inFlight.add(task);
      next += (-Math.log(1 - random()) / Math.max(rps(), 1e-6)) * 1000;
    }
    const idle = end - performance.now();
    if (idle > 1) await new Promise((r) => setTimeout(r, idle));
  }

  /** Waits for every answer. */
  async drain(): Promise<void> {
    await Promise.all(this.#inFlight);
  }
}
