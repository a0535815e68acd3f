/**
 * @module The `local` scaler: starts extra backend processes on this machine when the
 * recommendation asks for more backends than the pool has (never stops any: scaling
 * down is left to the operator), hands each one to `join` (the router adds it to its
 * pool; once it has said its name the balancer sees a changed backend set and
 * re-plans), and reports their URLs. Started processes belong to the router process:
 * they live as long as it does (the launcher's Ctrl-C stops them with it).
 */
import type { Scaler, ScalerOutcome, ScalingRecommendation } from "./prewarm_types.ts";

/** Starts one backend (the `index`-th extra one) and resolves with its URL once ready. */
export type BackendLauncher = (index: number) => Promise<string>;

/** Starts backends up to the recommended count; see the module doc. */
export class LocalScaler implements Scaler {
  readonly name = "local";
  readonly #launch: BackendLauncher;
  readonly #join: ((url: string) => void) | undefined;
  readonly #started: string[] = [];

  /**
   * `join`: adds each started backend to the router's pool, so the recommendation's
   * `current` already counts it; without `join` the scaler counts what it started.
   */
  constructor(launch: BackendLauncher, join?: (url: string) => void) {
    this.#launch = launch;
    this.#join = join;
  }

  /** URLs of every backend this scaler started. */
  get started(): readonly string[] {
    return this.#started;
  }

  async publish(recommendation: ScalingRecommendation): Promise<ScalerOutcome> {
    const uncounted = this.#join ? 0 : this.#started.length;
    const have = recommendation.current + uncounted;
    const missing = recommendation.target - have;
    if (missing <= 0) {
      return {
        scaler: this.name,
        status: "unchanged",
        detail: `${have} backends (pool ${recommendation.current} + started ${uncounted}) ` +
          `≥ target ${recommendation.target}`,
        started: [...this.#started],
      };
    }
    const urls: string[] = [];
    try {
      for (let i = 0; i < missing; i++) {
        const url = await this.#launch(this.#started.length);
        this.#started.push(url);
        urls.push(url);
        this.#join?.(url);
      }
    } catch (error) {
      return {
        scaler: this.name,
        status: "failed",
        detail: `started ${urls.length} of ${missing} backends: ${
          error instanceof Error ? error.message : String(error)
        }`,
        started: [...this.#started],
      };
    }
    return {
      scaler: this.name,
      status: "started",
      detail: `started ${urls.length} backends and added them to the pool`,
      started: [...this.#started],
    };
  }
}

/** Options of {@linkcode processLauncher}. */
export interface ProcessLauncherOptions {
  /** Env of every process (model dir, internal token, …). */
  env: Record<string, string>;
  /** First port; the `i`-th extra backend listens on `basePort + i`. */
  basePort: number;
  /** Repository root holding `gpu-backend/main.ts`. */
  root: string;
  /** Readiness limit; default 60 000 ms. */
  readyTimeoutMs?: number;
}

/** Starts `gpu-backend/main.ts` as a child process and waits for `/v2/health/ready`. */
export function processLauncher(options: ProcessLauncherOptions): BackendLauncher {
  return async (index) => {
    const port = options.basePort + index;
    const url = `http://127.0.0.1:${port}`;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "gpu-backend/main.ts"],
      cwd: options.root,
      env: {
        ...options.env,
        SWITCHYARD_BACKEND__PORT: String(port),
        SWITCHYARD_BACKEND__ID: `backend-scaled-${index + 1}`,
      },
      stdin: "null",
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    let exited = false;
    void child.status.then(() => exited = true);
    const token = options.env["SWITCHYARD_AUTH__INTERNAL_TOKEN"];
    const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
    while (Date.now() < deadline && !exited) {
      try {
        const response = await fetch(`${url}/v2/health/ready`, {
          headers: token ? { authorization: `Bearer ${token}` } : {},
        });
        await response.body?.cancel();
        if (response.ok) return url;
      } catch { /* not listening yet */ }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    throw new Error(`Cannot start backend on port ${port}: not ready (exited: ${exited})`);
  };
}
