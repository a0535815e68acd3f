/**
 * @module The router's Deno KV (plans, load history, traffic series, events, alerts):
 * the one the caller passes, else `state.kv` opened here — a local SQLite file (its
 * directory created), `:memory:`, a KV Connect URL, or `deploy`: Deno Deploy's managed
 * KV, which only `Deno.openKv()` with no argument reaches. Opening includes one read,
 * so a file that opens but cannot be read counts as unavailable too.
 *
 * When the KV is unavailable, `state.required: true` (the default) stops the router at
 * start with the reason ({@linkcode StateUnavailableError}); with `false` the router still
 * routes, the features that keep state are off, an error line says so, and readiness
 * ({@linkcode StateHealth}) answers not ready naming the KV and the reason.
 */
import { dirname } from "node:path";
import { type Config, ConfigError } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import type { StateReadiness } from "../serve/app.ts";
import type { Clock } from "../runtime/clock.ts";

/** The KV store, and whether the router owns (closes) it. */
export interface StateKv {
  kv: Deno.Kv;
  owned: boolean;
}

/** The state KV cannot be opened or read and `state.required` is true. */
export class StateUnavailableError extends ConfigError {
  constructor(message: string) {
    super(message);
    this.name = "StateUnavailableError";
  }
}

/** What opening the state KV gave: the store, or why there is none. */
export type OpenedState =
  | { state: StateKv; problem: null }
  | { state: undefined; problem: string };

/** A key no one writes: reading it proves the store can be read. */
const PROBE_KEY: Deno.KvKey = ["state", "probe"];

async function openAt(location: string): Promise<Deno.Kv> {
  if (location === "deploy") return await Deno.openKv();
  // An embedded file needs its directory; `:memory:` and KV Connect URLs do not.
  if (location !== ":memory:" && !/^https?:\/\//.test(location)) {
    await Deno.mkdir(dirname(location), { recursive: true });
  }
  return await Deno.openKv(location);
}

/**
 * Opens and reads the state KV. Throws {@linkcode StateUnavailableError} when it fails
 * and `state.required` is true; otherwise logs an error and returns the problem.
 */
export async function openStateKv(
  config: Pick<Config, "state">,
  provided: Deno.Kv | undefined,
  logger: Logger,
): Promise<OpenedState> {
  if (provided !== undefined) return { state: { kv: provided, owned: false }, problem: null };
  const location = config.state.kv;
  let kv: Deno.Kv | undefined;
  try {
    kv = await openAt(location);
    await kv.get(PROBE_KEY);
    return { state: { kv, owned: true }, problem: null };
  } catch (error) {
    kv?.close();
    const problem = `Cannot open state KV "${location}": ${(error as Error).message}`;
    if (config.state.required) {
      throw new StateUnavailableError(
        `${problem}. Fix or move the file (state.kv), or set state.required: false to run ` +
          "without plans, history and series.",
      );
    }
    logger.error("state unavailable: plans, history, series, events and alerts are off", {
      kv: location,
      error: (error as Error).message,
    });
    return { state: undefined, problem };
  }
}

/**
 * Readiness of the state KV: not ok when it could not be opened, or when its latest read
 * failed. Reads at most once per `everyMs` (default 5 s) and reuses the answer meanwhile.
 */
export class StateHealth {
  readonly #kv: Deno.Kv | undefined;
  readonly #location: string;
  readonly #clock: Clock;
  readonly #everyMs: number;
  #last: { at: number; result: StateReadiness } | undefined;

  constructor(
    opened: OpenedState,
    options: { location: string; clock: Clock; everyMs?: number },
  ) {
    this.#kv = opened.state?.kv;
    this.#location = options.location;
    this.#clock = options.clock;
    this.#everyMs = options.everyMs ?? 5000;
    if (opened.problem !== null) {
      this.#last = {
        at: Infinity,
        result: { ok: false, kv: this.#location, error: opened.problem },
      };
    }
  }

  /** Whether the KV can be read now (cached for `everyMs`). */
  async check(): Promise<StateReadiness> {
    const now = this.#clock.now();
    if (this.#kv === undefined) return this.#last!.result;
    if (this.#last !== undefined && now - this.#last.at < this.#everyMs) return this.#last.result;
    let result: StateReadiness;
    try {
      await this.#kv.get(PROBE_KEY);
      result = { ok: true, kv: this.#location };
    } catch (error) {
      result = {
        ok: false,
        kv: this.#location,
        error: `Cannot read state KV "${this.#location}": ${(error as Error).message}`,
      };
    }
    this.#last = { at: now, result };
    return result;
  }
}
