/**
 * @module One multi-router run: a fleet (`tools/pool/fleet.ts`: routers on one KV file,
 * backends found by register discovery) under skewed load from a closed-loop client that
 * spreads requests over the live routers — by default retrying on another router when a
 * connection fails, as a client behind a load balancer does, with the leader drained from
 * the rotation before its SIGKILL in the middle; with `drainMs: 0, retries: false` the
 * leader is killed under load and a request it held fails (the client then leaves it). Afterwards it reads what the issue asks:
 * lease log (leaders, overlap, failover), requests sent vs the KV traffic series, webhook
 * notifications per alert transition, plan versions on every backend, and whether every
 * router answers `/api/plan` and `/api/alerts` alike. Shared by the integration test and
 * `deno task bench:fleet`.
 */
import { PlanStore } from "../../router/control/balancer/plan_store.ts";
import { KvLeaseStore, type TermRecord } from "../../router/control/leader/lease_store.ts";
import { TrafficStore } from "../../router/control/traffic/traffic_store.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { FLEET_WAIT, leaderLines, startFleet } from "../pool/fleet.ts";
import { waitFor } from "../wait_for.ts";

/** Options of {@linkcode runFleet}. */
export interface FleetRunOptions {
  modelDir: string;
  model: string;
  dModel: number;
  dir: string;
  /** Load time (ms), or a function of the load's start time (ms since the epoch). */
  durationMs: number | ((start: number) => number);
  /**
   * When the leader is killed, ms after the load started (or a function of the start time);
   * it leaves the client rotation `drainMs` before (default 3 s; 0: not drained).
   */
  killAtMs: number | ((start: number) => number);
  drainMs?: number;
  /** Whether a request whose connection failed is retried on another router (default true). */
  retries?: boolean;
  concurrency: number;
  leaderTtl: string;
  renewInterval: string;
  /** Extra router env (balancer, alerts). */
  routerEnv?: Record<string, string>;
}

/** What a run measured. */
export interface FleetRunResult {
  sent: number;
  ok: number;
  failed: number;
  failures: Record<string, number>;
  retries: number;
  recorded: number;
  terms: TermRecord[];
  killedLeader: string;
  killAt: number;
  failoverMs: number | null;
  /** Every new term began after the previous lease expired (no two leaders). */
  leasesDisjoint: boolean;
  leaderLog: { router: string; state: string; term: number; at: string }[];
  notifications: {
    /** Transitions notified (distinct idempotency keys), by state. */
    fired: number;
    resolved: number;
    /** Transitions the routers decided to notify more than once. */
    duplicates: number;
    /** Second attempts (at-least-once retries after a failed or slow first attempt). */
    retried: number;
    unmatched: number;
  };
  plans: { current: number | null; backends: Record<string, number | null>; consistent: boolean };
  viewsAgree: { plan: boolean; alerts: boolean };
  /** Requests answered 200 per router (client side). */
  answeredBy: Record<string, number>;
  /** The killed leader's 200 answers in the `atRiskMs` before its kill: what it may not have flushed. */
  killedAtRisk: number;
  atRiskMs: number;
  /** When the pre-warm job ran (decision times, the new leader's `/api/prewarm`). */
  prewarmRuns: number[];
  /** The lease's takeover time after the kill (ms since the epoch), or null. */
  takeoverAt: number | null;
}

/** What a killed router may hold unflushed: one flush interval (1 s) and a flush's write time. */
export const AT_RISK_MS = 1500;

interface Notification {
  /** `idempotency-key`: the transition (`<id>@<firedAt>:<state>`). */
  key: string;
  /** `x-switchyard-attempt`: 2 is the router's retry of a POST that failed or timed out. */
  attempt: number;
}

function webhookReceiver() {
  const received: Notification[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      await request.body?.cancel();
      received.push({
        key: request.headers.get("idempotency-key") ?? "",
        attempt: Number(request.headers.get("x-switchyard-attempt")),
      });
      return new Response(null, { status: 204 });
    },
  );
  return {
    received,
    url: `http://127.0.0.1:${server.addr.port}/alerts`,
    close: () => server.shutdown(),
  };
}

async function json(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return await response.json();
}

/** Runs the fleet scenario; see the module doc. */
export async function runFleet(options: FleetRunOptions): Promise<FleetRunResult> {
  const traffic = (await loadDemoTraffic(options.modelDir))!;
  const webhook = webhookReceiver();
  const fleet = await startFleet({
    modelDir: options.modelDir,
    routers: 3,
    backends: 2,
    dir: options.dir,
    routerEnv: {
      SWITCHYARD_LEADER__TTL: options.leaderTtl,
      SWITCHYARD_LEADER__RENEW_INTERVAL: options.renewInterval,
      SWITCHYARD_ALERTS__WEBHOOK: webhook.url,
      SWITCHYARD_TRAFFIC__BUCKET: "10s",
      ...options.routerEnv,
    },
  });
  const random = createRandom(42);
  // Skewed: most requests are of one type, so a few experts run hot.
  const types = traffic.request_types;
  const pickType = () =>
    random() < 0.7 ? types[0]! : types[1 + Math.floor(random() * (types.length - 1))]!;
  const [leader] = fleet.routers;
  const draining = new Set<string>();
  const answeredBy: Record<string, number> = {};
  const killedAnswers: number[] = [];
  let sent = 0, ok = 0, failed = 0, retries = 0;
  const failures: Record<string, number> = {};
  let next = 0;
  const start = Date.now();
  const killAtMs = typeof options.killAtMs === "number"
    ? options.killAtMs
    : options.killAtMs(start);
  const durationMs = typeof options.durationMs === "number"
    ? options.durationMs
    : options.durationMs(start);
  const send = async () => {
    const type = pickType();
    const rows = 1 + Math.floor(random() * 4);
    const { body } = encodeInferRequest(demoTokens(traffic, type, rows, random), options.dModel, {
      requestType: type,
    });
    sent++;
    for (let attempt = 0; attempt < 6; attempt++) {
      const live = fleet.routers.filter((r) => r.alive && !draining.has(r.id));
      const router = live[next++ % live.length]!;
      try {
        const response = await fetch(`${router.url}/v2/models/${options.model}/infer`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await response.body?.cancel();
        if (response.status === 200) {
          ok++;
          answeredBy[router.id] = (answeredBy[router.id] ?? 0) + 1;
          if (router.id === leader!.id) killedAnswers.push(Date.now());
        } else {
          failed++;
          failures[String(response.status)] = (failures[String(response.status)] ?? 0) + 1;
        }
        return;
      } catch {
        if (options.retries === false) {
          // No retry: this request failed; the client stops using the router (as a balancer would).
          draining.add(router.id);
          break;
        }
        retries++; // the connection failed before the router saw the request
      }
    }
    failed++;
    failures["connection"] = (failures["connection"] ?? 0) + 1;
  };
  let killAt = 0;
  const drainMs = options.drainMs ?? 3000;
  const killer = (async () => {
    await new Promise((resolve) => setTimeout(resolve, killAtMs - drainMs));
    if (drainMs > 0) {
      draining.add(leader!.id);
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    killAt = Date.now();
    await leader!.stop("SIGKILL");
  })();
  await Promise.all(Array.from({ length: options.concurrency }, async () => {
    while (Date.now() - start < durationMs) await send();
  }));
  await killer;
  const live = fleet.routers.filter((r) => r.alive);
  // Quiet: alerts resolve (clear_after rounds), views are republished.
  await waitFor(
    "the new leader",
    async () =>
      (await Promise.all(
        live.map((r) => json(`${r.url}/api/leader`) as Promise<{ leader: boolean }>),
      ))
        .some((s) => s.leader),
    FLEET_WAIT,
  );
  await new Promise((resolve) => setTimeout(resolve, 8000));
  const bodies = async (path: string) =>
    await Promise.all(live.map(async (r) => JSON.stringify(await json(`${r.url}${path}`))));
  // Followers serve the leader's published views, republished every few seconds: on a busy
  // machine a view can be one publication behind, so wait (bounded) until every router agrees.
  let planBodies: string[] = [];
  let alertBodies: string[] = [];
  const agree = (all: string[]) => all.every((b) => b === all[0]);
  await waitFor("every router to answer /api/plan and /api/alerts alike", async () => {
    planBodies = await bodies("/api/plan");
    alertBodies = await bodies("/api/alerts");
    return agree(planBodies) && agree(alertBodies);
  }, { ...FLEET_WAIT, onTimeout: "resolve" });
  const prewarm = await json(`${live[0]!.url}/api/prewarm?limit=500`) as {
    decisions?: { at: number }[];
  };
  const backendPlans: Record<string, number | null> = {};
  for (const backend of fleet.backends) {
    const plan = await json(`${backend.url}/v2/plan`, {
      authorization: `Bearer ${fleet.token}`,
    }) as {
      active: number | null;
    };
    backendPlans[backend.id] = plan.active;
  }
  await fleet.close();
  webhook.close();

  // Read the shared state the routers left.
  const kv = await Deno.openKv(fleet.kvPath);
  const terms = await new KvLeaseStore(kv).terms();
  const store = new TrafficStore(kv, { clock: { now: () => Date.now() }, bucketMs: 10_000 });
  const counts = await store.values(
    { kind: "requests", model: options.model },
    start - 20_000,
    Date.now() + 20_000,
  );
  const current = await new PlanStore(kv).currentVersion(options.model);
  kv.close();

  const leaderLog = (await Promise.all(fleet.routers.map(leaderLines))).flat()
    .filter((line) => line["msg"] === "leader elected" || line["msg"] === "leader lost")
    .map((line) => ({
      router: String(line["router"]),
      state: String(line["state"]),
      term: Number(line["term"]),
      at: String(line["ts"]),
    }))
    .sort((a, b) => a.at.localeCompare(b.at));
  const takeover = terms.find((t) => t.previousHolder === leader!.id && t.since >= killAt);
  // A transition notified twice by the routers' own decision (two first attempts) is a
  // duplicate; a second attempt is the webhook's at-least-once retry, counted apart.
  const firstAttempts = webhook.received.filter((n) => n.attempt === 1);
  const duplicates = firstAttempts.length - new Set(firstAttempts.map((n) => n.key)).size;
  const transitions = [...new Set(webhook.received.map((n) => n.key))];
  const unmatched =
    transitions.filter((key) =>
      key.endsWith(":resolved") && !transitions.includes(key.replace(/:resolved$/, ":firing"))
    ).length;
  return {
    sent,
    ok,
    failed,
    failures,
    retries,
    recorded: counts.reduce((a, b) => a + b, 0),
    terms,
    killedLeader: leader!.id,
    killAt,
    failoverMs: takeover ? takeover.since - killAt : null,
    leasesDisjoint: terms.every((t) =>
      t.previousExpiresAt === null || t.since >= t.previousExpiresAt
    ),
    leaderLog,
    notifications: {
      fired: transitions.filter((key) => key.endsWith(":firing")).length,
      resolved: transitions.filter((key) => key.endsWith(":resolved")).length,
      duplicates,
      retried: webhook.received.filter((n) => n.attempt === 2).length,
      unmatched,
    },
    plans: {
      current,
      backends: backendPlans,
      consistent: Object.values(backendPlans).every((v) => v === current),
    },
    viewsAgree: {
      plan: agree(planBodies),
      alerts: agree(alertBodies),
    },
    answeredBy,
    killedAtRisk: killedAnswers.filter((at) => at >= killAt - AT_RISK_MS).length,
    atRiskMs: AT_RISK_MS,
    prewarmRuns: (prewarm.decisions ?? []).map((d) => d.at).sort((a, b) => a - b),
    takeoverAt: takeover?.since ?? null,
  };
}
