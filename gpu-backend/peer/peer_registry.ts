/**
 * @module The expert channels of one backend: a {@linkcode PeerClient} per other
 * backend named by the placement plans it has seen, replaced when a backend's URL
 * changes.
 */
import type { Logger } from "../../shared/logger.ts";
import type { PlanBackend } from "../../shared/placement_plan.ts";
import { PeerClient, type PeerClientOptions } from "./peer_client.ts";

/** Options of {@linkcode PeerRegistry}. */
export interface PeerRegistryOptions {
  selfId: string;
  token: string | undefined;
  logger: Logger;
  /** Counts frame bytes of every channel (node resources); optional. */
  net?: PeerClientOptions["net"];
}

/** Peer clients by backend id. */
export class PeerRegistry {
  readonly #options: PeerRegistryOptions;
  readonly #peers = new Map<string, { url: string; client: PeerClient }>();

  constructor(options: PeerRegistryOptions) {
    this.#options = options;
  }

  /** Adds (or re-targets) a client for every backend of a plan except this one. */
  update(backends: readonly PlanBackend[]): void {
    for (const backend of backends) {
      if (backend.id === this.#options.selfId) continue;
      const known = this.#peers.get(backend.id);
      if (known?.url === backend.url) continue;
      known?.client.close();
      this.#peers.set(backend.id, {
        url: backend.url,
        client: new PeerClient({
          peerId: backend.id,
          url: backend.url,
          selfId: this.#options.selfId,
          token: this.#options.token,
          logger: this.#options.logger,
          ...(this.#options.net ? { net: this.#options.net } : {}),
        }),
      });
    }
  }

  /** The client for a peer, if known. */
  get(id: string): PeerClient | undefined {
    return this.#peers.get(id)?.client;
  }

  /** Frames and rows sent per peer. */
  stats(): Record<string, PeerClient["sent"] & { available: boolean }> {
    return Object.fromEntries(
      [...this.#peers].map((
        [id, { client }],
      ) => [id, { ...client.sent, available: client.available }]),
    );
  }

  /** Every channel's counters (frames, rows and host-thread ms sent). */
  channels(): PeerClient["sent"][] {
    return [...this.#peers.values()].map(({ client }) => client.sent);
  }

  /** Closes every channel. */
  closeAll(): void {
    for (const { client } of this.#peers.values()) client.close();
    this.#peers.clear();
  }
}
