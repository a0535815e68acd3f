/**
 * @module Register discovery, the backend's half: every `intervalMs` it tells a router
 * (`backend.announce.router`, any router or the ingress in front of them) "I am at
 * `url`" with the internal token — `POST /api/backends/announce` — and on shutdown that
 * it is leaving, so routers drop it at once instead of after the TTL. Failures are
 * logged once per streak and never stop the backend.
 */
import type { Logger } from "../../shared/logger.ts";

/** Options of {@linkcode Announcer}. */
export interface AnnouncerOptions {
  router: string;
  /** This backend's URL as routers should use it. */
  url: string;
  /** The backend's own id. */
  id: string;
  intervalMs: number;
  internalToken: string | undefined;
  logger: Logger;
  fetch?: typeof globalThis.fetch;
  /** Limit of each call; default 5 s. */
  timeoutMs?: number;
}

/** Sends the heartbeats; see the module doc. */
export class Announcer {
  readonly #options: AnnouncerOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failing = false;
  #running = false;

  constructor(options: AnnouncerOptions) {
    this.#options = options;
  }

  /** Announces now, then every interval. */
  async start(): Promise<void> {
    this.#running = true;
    await this.#beat();
    this.#schedule();
  }

  /** Stops the heartbeats and says goodbye (best effort). */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    await this.#send(true).catch(() => {});
  }

  #schedule(): void {
    if (!this.#running) return;
    this.#timer = setTimeout(
      () => void this.#beat().finally(() => this.#schedule()),
      this.#options.intervalMs,
    );
  }

  async #beat(): Promise<void> {
    const { logger, router } = this.#options;
    try {
      await this.#send(false);
      if (this.#failing) {
        logger.info("announcing to the router again", { event: "announce", router });
      }
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        logger.warn("cannot announce to the router", {
          event: "announce",
          router,
          error: (error as Error).message,
        });
      }
      this.#failing = true;
    }
  }

  async #send(leaving: boolean): Promise<void> {
    const { router, url, id, internalToken, timeoutMs } = this.#options;
    const fetch = this.#options.fetch ?? globalThis.fetch;
    const response = await fetch(`${router.replace(/\/+$/, "")}/api/backends/announce`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(internalToken ? { authorization: `Bearer ${internalToken}` } : {}),
      },
      body: JSON.stringify(leaving ? { url, id, leaving } : { url, id }),
      signal: AbortSignal.timeout(timeoutMs ?? 5000),
    });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  }
}
