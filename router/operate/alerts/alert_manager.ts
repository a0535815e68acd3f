/**
 * @module Runs the alert rules once per load round and keeps what they found: the
 * {@linkcode AlertSource} behind `GET /api/alerts`, the dashboard and the metrics.
 *
 * Each round (the collector's `onRound`): conditions from the pool's load and backend
 * views → hysteresis → for every fire and resolve a log line (`event: "alert"`, warn on
 * fire, info on resolve), a KV record and, when configured, a webhook POST. The round
 * itself is synchronous and never throws; KV and webhook calls run in the background
 * (`settled()` waits for them) so a slow receiver never delays load polling.
 */
import type { Logger } from "../../../shared/logger.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import { type LatencyReading, observeConditions } from "./alert_conditions.ts";
import type { RebalanceReading } from "./rebalance_stalled.ts";
import { type AlertState, evaluateAlerts } from "./alert_evaluator.ts";
import type { AlertSettings } from "./alert_settings.ts";
import type { AlertStore } from "./alert_store.ts";
import type { Alert, AlertSource } from "./alert_types.ts";
import { postAlertWebhook, postJson } from "./alert_webhook.ts";
import { postableAlerts, webhookV4 } from "./alertmanager_payload.ts";

/** Options of {@linkcode AlertManager}. */
export interface AlertManagerOptions {
  settings: AlertSettings;
  /** The pool's backends now (health and names). */
  views: () => readonly BackendView[];
  /** The router's recent request latency (the SLO rule); none: no latency alert. */
  latency?: (now: number) => LatencyReading | undefined;
  /** The balancer's health (the `rebalance_stalled` rule); none: no such alert. */
  rebalance?: () => RebalanceReading | undefined;
  clock: Clock;
  logger: Logger;
  /** Where records are kept; none: memory only. */
  store?: AlertStore | undefined;
  /**
   * `alerts.webhook`; none: no POSTs. `format` `switchyard` (default): one POST per fire
   * or resolve; `alertmanager`: Alertmanager's v4 webhook body, one POST per alert group
   * (alertname) that changed in an evaluation.
   */
  webhook?: {
    url: string;
    fetch: FetchLike;
    format?: "switchyard" | "alertmanager";
    timeoutMs?: number;
    retryDelayMs?: number;
  };
  /**
   * `alerts.alertmanager`: an Alertmanager's base URL; every evaluation that changes
   * something, and every `resendMs` (default 60 s) while alerts fire, POSTs them to its
   * `/api/v2/alerts`.
   */
  alertmanager?: { url: string; fetch: FetchLike; resendMs?: number; timeoutMs?: number };
  /** Where alerts can be seen, for `generatorURL`/`externalURL`; default `http://localhost/dashboard`. */
  externalUrl?: string;
  /** How many recent alerts are kept; default 100. */
  recentLimit?: number;
  /**
   * Whether fires and resolves are announced (log line, KV record, webhook, counts);
   * default always. Followers of a leader evaluate silently, for their own dashboard.
   */
  announcing?: () => boolean;
}

/** Evaluates alerts per load round; see the module doc. */
export class AlertManager implements AlertSource {
  readonly #options: AlertManagerOptions;
  #state: AlertState = new Map();
  #active: readonly Alert[] = [];
  /** Newest first; one entry per firing (updated in place when it resolves). */
  #recent: Alert[] = [];
  readonly #pending = new Set<Promise<unknown>>();
  #lastPush = -Infinity;
  /** Fires and resolves since start (for metrics). */
  readonly counts = { fired: 0, resolved: 0 };

  constructor(options: AlertManagerOptions) {
    this.#options = options;
  }

  /** Alerts firing now, oldest first. */
  active(): readonly Alert[] {
    return this.#active;
  }

  /** Recent alerts, firing and resolved, newest first (at most `recentLimit`). */
  recent(): readonly Alert[] {
    return this.#recent;
  }

  /**
   * Continues from the alert records the previous leader kept (a new leader reading the
   * shared state). A recorded firing alert counts as announced: it is not fired again,
   * and resolves once. A condition this router only tracked silently (as a follower) and
   * nobody announced fires at the next round where it still holds.
   */
  resume(records: readonly Alert[]): void {
    const { settings } = this.#options;
    const firing = new Map(
      records.filter((alert) => alert.state === "firing").map((alert) => [alert.id, alert]),
    );
    const state = new Map(this.#state);
    for (const [id, track] of state) {
      if (track.alert !== undefined && !firing.has(id)) {
        state.set(id, { ...track, alert: undefined });
      }
    }
    for (const [id, alert] of firing) {
      const track = state.get(id);
      const present = Math.max(track?.present ?? 0, settings.raiseAfter);
      state.set(id, { present, absent: track?.absent ?? 0, alert });
    }
    this.#state = state;
    this.#active = [...state.values()].flatMap((track) => track.alert ? [track.alert] : [])
      .sort((a, b) => a.firedAt - b.firedAt || a.id.localeCompare(b.id));
    const known = new Set(records.map((alert) => `${alert.id}@${alert.firedAt}`));
    const merged = [
      ...records,
      ...this.#recent.filter((a) => !known.has(`${a.id}@${a.firedAt}`) && firing.has(a.id)),
    ];
    this.#recent = merged.sort((a, b) => b.firedAt - a.firedAt)
      .slice(0, this.#options.recentLimit ?? 100);
  }

  /** Evaluates one round; never throws, never waits for I/O. */
  onRound(load: PoolLoad): void {
    try {
      this.#evaluate(load);
    } catch (error) {
      this.#options.logger.error("alert evaluation failed", {
        event: "alert",
        error: (error as Error).message,
      });
    }
  }

  /** Resolves when every KV write and webhook POST started so far has finished. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #evaluate(load: PoolLoad): void {
    const { settings, clock } = this.#options;
    const now = clock.now();
    const conditions = observeConditions(
      load,
      this.#options.views(),
      settings,
      this.#options.latency?.(now),
      this.#options.rebalance?.(),
    );
    const round = evaluateAlerts(this.#state, conditions, {
      now,
      raiseAfter: settings.raiseAfter,
      clearAfter: settings.clearAfter,
    });
    this.#state = round.state;
    this.#active = round.active;
    for (const alert of round.fired) this.#fired(alert);
    for (const alert of round.resolved) this.#resolved(alert);
    if (this.#options.announcing?.() !== false) {
      this.#notifyGroups(round.active, [...round.fired, ...round.resolved]);
    }
    // Firing alerts carry their latest value in the recent list too.
    const latest = new Map(round.active.map((alert) => [alert.id, alert]));
    this.#recent = this.#recent.map((alert) =>
      alert.state === "firing" ? latest.get(alert.id) ?? alert : alert
    );
  }

  #fired(alert: Alert): void {
    this.#recent.unshift(alert);
    this.#recent.length = Math.min(this.#recent.length, this.#options.recentLimit ?? 100);
    if (this.#options.announcing?.() === false) return;
    this.counts.fired++;
    this.#options.logger.warn("alert firing", this.#fields(alert));
    this.#announce(alert);
  }

  #resolved(alert: Alert): void {
    const index = this.#recent.findIndex((a) => a.id === alert.id && a.firedAt === alert.firedAt);
    if (index >= 0) this.#recent[index] = alert;
    if (this.#options.announcing?.() === false) return;
    this.counts.resolved++;
    this.#options.logger.info("alert resolved", {
      ...this.#fields(alert),
      firing_ms: alert.resolvedAt! - alert.firedAt,
    });
    this.#announce(alert);
  }

  #fields(alert: Alert) {
    return {
      event: "alert",
      alert_id: alert.id,
      kind: alert.kind,
      subject: alert.subject,
      state: alert.state,
      value: Math.round(alert.value * 1000) / 1000,
      threshold: alert.threshold,
      message: alert.message,
    };
  }

  /** Background work: KV record and (Switchyard-format) webhook POST. */
  #announce(alert: Alert): void {
    const { store, webhook, clock, logger } = this.#options;
    if (store) this.#track(store.save(alert));
    if (webhook && (webhook.format ?? "switchyard") === "switchyard") {
      this.#track(postAlertWebhook(alert, { ...webhook, clock, logger }));
    }
  }

  /** Alertmanager-format notifications of one evaluation (grouped), and the v2 push. */
  #notifyGroups(active: readonly Alert[], changed: readonly Alert[]): void {
    const { webhook, alertmanager, clock, logger } = this.#options;
    const context = { externalUrl: this.#options.externalUrl ?? "http://localhost/dashboard" };
    if (webhook?.format === "alertmanager" && changed.length > 0) {
      for (const body of webhookV4(active, changed, context)) {
        const key = `${body.groupKey}@${clock.now()}`;
        this.#track(postJson(body, key, { ...webhook, clock, logger }, {
          group: body.groupKey,
          state: body.status,
        }));
      }
    }
    if (alertmanager === undefined) return;
    const now = clock.now();
    const resend = active.length > 0 && now - this.#lastPush >= (alertmanager.resendMs ?? 60_000);
    if (changed.length === 0 && !resend) return;
    this.#lastPush = now;
    const alerts = [...active, ...changed.filter((alert) => alert.state === "resolved")];
    const url = new URL(
      "api/v2/alerts",
      alertmanager.url.endsWith("/") ? alertmanager.url : `${alertmanager.url}/`,
    );
    this.#track(postJson(postableAlerts(alerts, context), `push@${now}`, {
      ...alertmanager,
      url: url.href,
      clock,
      logger,
    }, { alertmanager: url.origin, alerts: alerts.length }));
  }

  #track(work: Promise<unknown>): void {
    const tracked = work.catch(() => {}).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
