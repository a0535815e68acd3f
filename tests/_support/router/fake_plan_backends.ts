/**
 * @module Test fakes: backends implementing the plan endpoints in memory (`PUT /v2/plan`,
 * `POST /v2/plan/activate`, `POST /v2/plan/release`, `GET /v2/plan`, `GET /v2/plan/active`)
 * behind one `fetch` that dispatches by host, recording every call in order. Plan-changing
 * calls pass the same owner check as real backends (`admitOwner`, `shared/plan_owner.ts`).
 */
import { Hono } from "hono";
import { hasBearerToken } from "../../../shared/bearer_token.ts";
import {
  hostedExperts,
  type PlacementPlan,
  PlacementPlanSchema,
  type PlanBackend,
  PlanVersionBodySchema,
} from "../../../shared/placement_plan.ts";
import type { FetchLike } from "../../../router/runtime/fetch_like.ts";
import { admitOwner, ownerFromHeaders, type PlanOwner } from "../../../shared/plan_owner.ts";

/** One plan call a fake backend received. */
export interface PlanCall {
  backend: string;
  method: string;
  path: string;
  version: number | null;
}

/** What one fake backend holds. */
export interface FakePlanState {
  active: number | null;
  staged: number | null;
  plans: Map<number, PlacementPlan>;
  /** Loaded parts, `L{layer}/E{expert}`. */
  loaded: Set<string>;
  /** `authorization` headers seen. */
  authorizations: (string | null)[];
  /** The pool and term plan calls must come from (null: unclaimed). */
  owner: PlanOwner | null;
}

/** A pool of fake plan backends at `http://{id}`. */
export class FakePlanBackends {
  readonly calls: PlanCall[] = [];
  readonly state = new Map<string, FakePlanState>();
  /** Backend ids whose `PUT /v2/plan` answers 500. */
  readonly failStage = new Set<string>();
  /** Backend ids whose `POST /v2/plan/activate` answers 500. */
  readonly failActivate = new Set<string>();
  /** Runs before a backend handles each plan call (e.g. to race another router). */
  beforeCall: ((call: PlanCall) => Promise<void> | void) | undefined;
  readonly #apps = new Map<string, Hono>();
  readonly #token: string | undefined;

  constructor(ids: readonly string[], options: { internalToken?: string } = {}) {
    this.#token = options.internalToken;
    for (const id of ids) {
      const state: FakePlanState = {
        active: null,
        staged: null,
        plans: new Map(),
        loaded: new Set(),
        authorizations: [],
        owner: null,
      };
      this.state.set(id, state);
      this.#apps.set(id, this.#app(id, state));
    }
  }

  /** Forgets everything backend `id` held, as a restarted process would. */
  restart(id: string): void {
    const state = this.state.get(id)!;
    state.active = null;
    state.staged = null;
    state.plans.clear();
    state.loaded.clear();
  }

  /** The backends as a plan names them. */
  backends(): PlanBackend[] {
    return [...this.state.keys()].map((id) => ({ id, url: `http://${id}` }));
  }

  /** Dispatches to the fake backend named by the URL's host; unknown hosts refuse. */
  readonly fetch: FetchLike = (input, init) => {
    const request = new Request(input, init);
    const app = this.#apps.get(new URL(request.url).host);
    if (app === undefined) return Promise.reject(new TypeError("connection refused"));
    return Promise.resolve(app.request(request));
  };

  /** Calls in order as `METHOD path @backend`. */
  trace(): string[] {
    return this.calls.map((call) => `${call.method} ${call.path} @${call.backend}`);
  }

  async #record(call: PlanCall): Promise<void> {
    this.calls.push(call);
    await this.beforeCall?.(call);
  }

  #app(id: string, state: FakePlanState): Hono {
    const app = new Hono();
    const error = (message: string, status: 400 | 401 | 404 | 409 | 500) =>
      new Response(JSON.stringify({ error: message, code: "x" }), {
        status,
        headers: { "content-type": "application/json" },
      });
    app.use("*", async (c, next) => {
      state.authorizations.push(c.req.header("authorization") ?? null);
      if (this.#token !== undefined && !hasBearerToken(c.req.raw.headers, this.#token)) {
        return error("missing or wrong internal token", 401);
      }
      if (c.req.method !== "GET") {
        const incoming = ownerFromHeaders(c.req.raw.headers);
        if (typeof incoming === "string") return error(incoming, 400);
        const decision = admitOwner(state.owner, incoming);
        if (!decision.ok) return error(`Cannot change the plan: ${decision.message}`, 409);
        if (decision.owner) state.owner = decision.owner;
      }
      await next();
    });
    app.put("/v2/plan", async (c) => {
      const parsed = PlacementPlanSchema.safeParse(await c.req.json());
      const version = parsed.success ? parsed.data.version : null;
      await this.#record({ backend: id, method: "PUT", path: "/v2/plan", version });
      if (!parsed.success) return error("bad plan", 400);
      // As a real backend: the slots must be those of every backend the plan names.
      const slots = parsed.data.backends.length * parsed.data.slotsPerBackend;
      if (parsed.data.layers.some((layer) => layer.phy2log.length !== slots)) {
        return error(`phy2log must have ${slots} slots`, 400);
      }
      if (this.failStage.has(id)) return error("Cannot load experts: out of memory", 500);
      const plan = parsed.data;
      const loaded: string[] = [];
      hostedExperts(plan, id).forEach((experts, layer) => {
        for (const expert of experts) {
          const part = `L${layer}/E${expert}`;
          if (!state.loaded.has(part)) loaded.push(part);
          state.loaded.add(part);
        }
      });
      state.plans.set(plan.version, plan);
      state.staged = plan.version;
      return c.json({ staged: plan.version, loaded, ms: 1 });
    });
    app.post("/v2/plan/activate", async (c) => {
      const { version } = PlanVersionBodySchema.parse(await c.req.json());
      await this.#record({ backend: id, method: "POST", path: "/v2/plan/activate", version });
      if (this.failActivate.has(id)) return error("Cannot activate: crashed", 500);
      if (state.staged !== version) return error(`version ${version} is not staged`, 409);
      state.active = version;
      state.staged = null;
      return c.json({ active: version });
    });
    app.post("/v2/plan/release", async (c) => {
      const { version } = PlanVersionBodySchema.parse(await c.req.json());
      await this.#record({ backend: id, method: "POST", path: "/v2/plan/release", version });
      if (state.active !== version) return error(`version ${version} is not active`, 409);
      const keep = new Set(
        hostedExperts(state.plans.get(version)!, id).flatMap((experts, layer) =>
          experts.map((expert) => `L${layer}/E${expert}`)
        ),
      );
      const unloaded = [...state.loaded].filter((part) => !keep.has(part));
      for (const part of unloaded) state.loaded.delete(part);
      return c.json({ unloaded });
    });
    app.get("/v2/plan/active", async (c) => {
      await this.#record({ backend: id, method: "GET", path: "/v2/plan/active", version: null });
      const plan = state.active === null ? undefined : state.plans.get(state.active);
      return plan === undefined ? error("no active plan", 404) : c.json(plan);
    });
    app.get("/v2/plan", async (c) => {
      await this.#record({ backend: id, method: "GET", path: "/v2/plan", version: null });
      return c.json({ active: state.active, staged: state.staged });
    });
    return app;
  }
}
