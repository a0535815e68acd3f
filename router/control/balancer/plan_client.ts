/**
 * @module The router's plan calls to backends: `PUT /v2/plan` (stage: load and warm the
 * experts a plan puts there), `POST /v2/plan/activate`, `POST /v2/plan/release` and
 * `GET /v2/plan`. Each call goes to every backend of the plan in parallel, bounded by a
 * per-backend timeout on the injected clock, and carries the internal token when one is
 * configured. Errors name backends and reasons, never the token.
 *
 * Fencing: with an `owner` source, every call carries this router's pool id and leader
 * term (`shared/plan_owner.ts`; a staged plan names them too), and while the source says
 * this router does not steer (null) no call is sent: each backend fails with that reason.
 * A backend following another pool or a newer term answers 409 (`HTTP 409: …` reasons).
 */
import { z } from "zod";
import {
  type PlacementPlan,
  PlacementPlanSchema,
  type PlanBackend,
} from "../../../shared/placement_plan.ts";
import { isOwnerRefusal, ownerHeaders, type PlanOwner } from "../../../shared/plan_owner.ts";
import { callJson, type JsonCallResult } from "../../runtime/call_json.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";

/** Options of {@linkcode PlanClient}. */
export interface PlanClientOptions {
  fetch: FetchLike;
  clock: Clock;
  /** Sent as `authorization: Bearer …` when set; never logged or put in errors. */
  internalToken?: string | undefined;
  /** Limit of a stage call per backend (it loads experts); default 120 000 ms. */
  stageTimeoutMs?: number;
  /** Limit of every other call per backend; default 10 000 ms. */
  timeoutMs?: number;
  /**
   * The pool id and leader term calls carry; null while this router must not steer (no
   * call is sent). Default: none (unfenced calls, for tools and tests of one router).
   */
  owner?: () => PlanOwner | null;
  /** Told of every backend that refused a call as coming from another pool or an older term. */
  onRefused?: (backend: string, reason: string) => void;
}

/** The reason every backend fails with while this router does not steer the pool. */
export const NOT_STEERING = "this router does not lead the pool now (no plan call sent)";

/** The step of a plan switch a call belongs to. */
export type PlanStep = "stage" | "activate" | "release" | "status";

/** One backend's failure. */
export interface PlanCallFailure {
  backend: string;
  reason: string;
}

/** Some backends failed a plan call; `succeeded` lists the ids that did not. */
export class PlanCallError extends Error {
  readonly step: PlanStep;
  readonly version: number;
  readonly failures: PlanCallFailure[];
  readonly succeeded: string[];

  constructor(
    step: PlanStep,
    version: number,
    failures: PlanCallFailure[],
    succeeded: string[],
  ) {
    const detail = failures.map((f) => `"${f.backend}" (${f.reason})`).join(", ");
    const action = step === "status" ? "read plan status" : `${step} plan version ${version}`;
    super(`Cannot ${action}: failed on ${detail}`);
    this.name = "PlanCallError";
    this.step = step;
    this.version = version;
    this.failures = failures;
    this.succeeded = succeeded;
  }
}

/** Staging failed on some backends: the switch must be abandoned. */
export class PlanStageError extends PlanCallError {
  constructor(version: number, failures: PlanCallFailure[], succeeded: string[]) {
    super("stage", version, failures, succeeded);
    this.name = "PlanStageError";
  }
}

/** What one backend staged. */
export interface StageResult {
  backend: string;
  staged: number;
  /** Parts it loaded for this plan, e.g. `L0/E3`. */
  loaded: string[];
  ms: number;
}

/** What one backend unloaded on release. */
export interface ReleaseResult {
  backend: string;
  unloaded: string[];
}

/** A backend's plan state (`GET /v2/plan`). */
export interface BackendPlanStatus {
  active: number | null;
  staged: number | null;
}

const StageBodySchema = z.object({
  staged: z.number(),
  loaded: z.array(z.string()).default([]),
  ms: z.number().default(0),
});
const ReleaseBodySchema = z.object({ unloaded: z.array(z.string()).default([]) });
const StatusBodySchema = z.object({
  active: z.number().nullable(),
  staged: z.number().nullable(),
});

type Answer = JsonCallResult;

/** Plan calls to the backends of a plan; see the module doc. */
export class PlanClient {
  readonly #options: PlanClientOptions;

  constructor(options: PlanClientOptions) {
    this.#options = options;
  }

  /**
   * Stages `plan` on every backend (or those named in `only`); throws
   * {@linkcode PlanStageError} naming those that failed.
   */
  async stage(plan: PlacementPlan, only?: readonly string[]): Promise<StageResult[]> {
    const answers = await this.#each(
      plan,
      only,
      (backend, owner) =>
        this.#call(
          backend,
          "PUT",
          "/v2/plan",
          owner ? { ...plan, owner } : plan,
          this.#options.stageTimeoutMs ?? 120_000,
        ).then((answer) => parseAnswer(answer, StageBodySchema)),
    );
    const failures = answers.flatMap((a) => a.ok ? [] : [{ backend: a.backend, reason: a.reason }]);
    if (failures.length > 0) {
      throw new PlanStageError(
        plan.version,
        failures,
        answers.filter((a) => a.ok).map((a) => a.backend),
      );
    }
    return answers.flatMap((a) => a.ok ? [{ backend: a.backend, ...a.value }] : []);
  }

  /** Activates `plan.version` on every backend (or `only` those); throws {@linkcode PlanCallError}. */
  async activate(plan: PlacementPlan, only?: readonly string[]): Promise<void> {
    const answers = await this.#each(
      plan,
      only,
      (backend) =>
        this.#call(backend, "POST", "/v2/plan/activate", { version: plan.version })
          .then((answer) => parseAnswer(answer, z.unknown())),
    );
    throwFailures("activate", plan.version, answers);
  }

  /** Asks every backend (or `only` those) to unload what `plan` (their active version) does not need. */
  async release(plan: PlacementPlan, only?: readonly string[]): Promise<ReleaseResult[]> {
    const answers = await this.#each(
      plan,
      only,
      (backend) =>
        this.#call(backend, "POST", "/v2/plan/release", { version: plan.version })
          .then((answer) => parseAnswer(answer, ReleaseBodySchema)),
    );
    throwFailures("release", plan.version, answers);
    return answers.flatMap((a) => a.ok ? [{ backend: a.backend, ...a.value }] : []);
  }

  /**
   * The plan backend `backend` runs (`GET /v2/plan/active`), or null when it has none
   * (404); throws {@linkcode PlanCallError} when it cannot be read.
   */
  async activePlan(backend: PlanBackend): Promise<PlacementPlan | null> {
    const answer = await this.#call(backend, "GET", "/v2/plan/active");
    if (!answer.ok && answer.reason.startsWith("HTTP 404")) return null;
    const parsed = parseAnswer(answer, PlacementPlanSchema);
    if (!parsed.ok) {
      throw new PlanCallError("status", 0, [{ backend: backend.id, reason: parsed.reason }], []);
    }
    return parsed.value;
  }

  /** One backend's active and staged versions; throws {@linkcode PlanCallError} on failure. */
  async status(backend: PlanBackend): Promise<BackendPlanStatus> {
    const answer = parseAnswer(await this.#call(backend, "GET", "/v2/plan"), StatusBodySchema);
    if (!answer.ok) {
      throw new PlanCallError("status", 0, [{ backend: backend.id, reason: answer.reason }], []);
    }
    return answer.value;
  }

  /** Calls the plan's backends (those in `only`, when given) in parallel; the whole plan goes to each. */
  #each<T>(
    plan: PlacementPlan,
    only: readonly string[] | undefined,
    call: (backend: PlanBackend, owner: PlanOwner | undefined) => Promise<Parsed<T>>,
  ): Promise<(Parsed<T> & { backend: string })[]> {
    const targets = only === undefined
      ? plan.backends
      : plan.backends.filter((backend) => only.includes(backend.id));
    const owner = this.#owner();
    if (owner === null) {
      return Promise.resolve(
        targets.map((backend) => ({
          ok: false as const,
          reason: NOT_STEERING,
          backend: backend.id,
        })),
      );
    }
    return Promise.all(
      targets.map(async (backend) => {
        const answer = await call(backend, owner);
        if (!answer.ok && isOwnerRefusal(answer.reason)) {
          this.#options.onRefused?.(backend.id, answer.reason);
        }
        return { ...answer, backend: backend.id };
      }),
    );
  }

  /** The owner calls carry: undefined when unfenced, null while this router must not steer. */
  #owner(): PlanOwner | null | undefined {
    return this.#options.owner === undefined ? undefined : this.#options.owner();
  }

  #call(
    backend: PlanBackend,
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = this.#options.timeoutMs ?? 10_000,
  ): Promise<Answer> {
    const { internalToken } = this.#options;
    const owner = this.#owner();
    return callJson(this.#options, `${backend.url.replace(/\/+$/, "")}${path}`, {
      method,
      token: internalToken,
      body,
      timeoutMs,
      ...(owner ? { headers: ownerHeaders(owner) } : {}),
    });
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

function parseAnswer<T>(answer: Answer, schema: z.ZodType<T>): Parsed<T> {
  if (!answer.ok) return answer;
  const parsed = schema.safeParse(answer.body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, reason: `bad answer: ${issue.path.join(".") || "body"}: ${issue.message}` };
}

function throwFailures(
  step: PlanStep,
  version: number,
  answers: ({ ok: boolean; backend: string } & ({ ok: true } | { ok: false; reason: string }))[],
): void {
  const failures = answers.flatMap((a) => a.ok ? [] : [{ backend: a.backend, reason: a.reason }]);
  if (failures.length === 0) return;
  throw new PlanCallError(
    step,
    version,
    failures,
    answers.filter((a) => a.ok).map((a) => a.backend),
  );
}
