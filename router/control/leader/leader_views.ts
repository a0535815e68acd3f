/**
 * @module What followers answer for the leader's state: the leader renders the read-only
 * bodies of `/api/alerts`, `/api/plan`, `/api/prewarm` and `/api/prewarm/desired` through
 * its own app after every load round and keeps them in shared state (`["leader", "views", path]`, written only
 * when they change); a follower's GET of those paths answers the stored body, so every
 * router answers the same. Before any leader published, or when a stored body is known to
 * be out of date (`stale`: a plan switch the dead leader never published), a follower
 * answers itself.
 * `?limit=N` of `/api/prewarm` is applied to the stored body.
 */
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../../shared/logger.ts";
import type { Clock } from "../../runtime/clock.ts";
import { withKvRetry } from "../state/kv_retry.ts";

/** The paths followers answer from the leader's copy. */
export const LEADER_VIEW_PATHS = [
  "/api/alerts",
  "/api/plan",
  "/api/prewarm",
  "/api/prewarm/desired",
] as const;

const PREFIX: Deno.KvKey = ["leader", "views"];

/** One published body. */
export interface LeaderView {
  body: string;
  leader: string;
  term: number | null;
  at: number;
}

/** Options of {@linkcode LeaderViews}. */
export interface LeaderViewsOptions {
  clock: Clock;
  logger: Logger;
  isLeader: () => boolean;
  leader: () => { id: string; term: number | null };
  /** How long a follower reuses a view it read; default 500 ms. */
  cacheMs?: number;
  /**
   * Whether a stored body is known to be out of date (e.g. it names a plan version that is
   * no longer current: the leader died before publishing again); then the follower
   * answers itself. Default: never.
   */
  stale?: (path: string, body: string) => Promise<boolean>;
}

/** Publishes (leader) and serves (followers) the leader's views; see the module doc. */
export class LeaderViews {
  readonly #kv: Deno.Kv;
  readonly #options: LeaderViewsOptions;
  readonly #published = new Map<string, string>();
  readonly #cache = new Map<string, { view: LeaderView | null; until: number }>();
  #failing = false;

  constructor(kv: Deno.Kv, options: LeaderViewsOptions) {
    this.#kv = kv;
    this.#options = options;
  }

  /** Leader: renders every view with `render` and stores those that changed. */
  async publish(render: (path: string) => Promise<Response>): Promise<void> {
    const { clock, logger, leader } = this.#options;
    try {
      for (const path of LEADER_VIEW_PATHS) {
        const response = await render(path);
        if (response.status !== 200) {
          await response.body?.cancel();
          continue;
        }
        const body = await response.text();
        if (this.#published.get(path) === body) continue;
        const { id, term } = leader();
        const view: LeaderView = { body, leader: id, term, at: clock.now() };
        await withKvRetry(() => this.#kv.set([...PREFIX, path], view));
        this.#published.set(path, body);
      }
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        logger.warn("leader views not published", {
          event: "leader",
          error: (error as Error).message,
        });
      }
      this.#failing = true;
    }
  }

  /** The stored view of `path`, if a leader published one. */
  async read(path: string): Promise<LeaderView | null> {
    const now = this.#options.clock.now();
    const cached = this.#cache.get(path);
    if (cached !== undefined && cached.until > now) return cached.view;
    const view = (await this.#kv.get<LeaderView>([...PREFIX, path])).value;
    this.#cache.set(path, { view, until: now + (this.#options.cacheMs ?? 500) });
    return view;
  }

  async #isStale(path: string, body: string): Promise<boolean> {
    try {
      return await this.#options.stale?.(path, body) ?? false;
    } catch {
      return true;
    }
  }

  /** Middleware: followers answer the paths above from the leader's copy. */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const path = c.req.path as (typeof LEADER_VIEW_PATHS)[number];
      if (c.req.method !== "GET" || !LEADER_VIEW_PATHS.includes(path) || this.#options.isLeader()) {
        return next();
      }
      let view: LeaderView | null;
      try {
        view = await this.read(path);
      } catch {
        view = null; // the shared state is down: answer from this router
      }
      if (view === null || await this.#isStale(path, view.body)) return next();
      const headers = {
        "content-type": "application/json",
        "x-switchyard-view": "leader",
        "x-switchyard-leader": view.leader,
      };
      const limit = Number(c.req.query("limit"));
      if (path === "/api/prewarm" && Number.isInteger(limit) && limit >= 1 && limit <= 500) {
        const body = JSON.parse(view.body);
        body.decisions = body.decisions?.slice(0, limit);
        return c.body(JSON.stringify(body), 200, headers);
      }
      if (c.req.query("limit") !== undefined) return next(); // let the route name the bad value
      return c.body(view.body, 200, headers);
    };
  }
}
