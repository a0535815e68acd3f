/**
 * @module Reads the accelerators with `nvidia-smi` in the background, so a load report
 * only copies the latest reading and never waits for a process to start.
 *
 * Every `intervalMs` (default 5 s) one run, each limited to `timeoutMs`; runs never
 * overlap. A missing binary ends sampling for good (a CPU-only host: the reading stays
 * `null`); a failed or unparsable run sets the reading to `null` until a run succeeds,
 * so a report never shows an old number as if it were current. State changes are
 * logged once, not every run.
 */
import type { AcceleratorReading } from "../../shared/load_report.ts";
import type { Logger } from "../../shared/logger.ts";
import { nvidiaSmiArgs, parseNvidiaSmi } from "./nvidia_smi_parse.ts";

/** Result of one command run. */
export interface CommandOutput {
  success: boolean;
  stdout: string;
}

/**
 * Runs `nvidia-smi` with `args`; rejects with `Deno.errors.NotFound` when it is not
 * installed, and with any error when it could not finish within `timeoutMs`.
 */
export type NvidiaSmiRunner = (
  args: readonly string[],
  timeoutMs: number,
) => Promise<CommandOutput>;

/** Runs the real `nvidia-smi`, killed after `timeoutMs`. */
export async function runNvidiaSmi(
  args: readonly string[],
  timeoutMs: number,
): Promise<CommandOutput> {
  const output = await new Deno.Command("nvidia-smi", {
    args: [...args],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  return { success: output.success, stdout: new TextDecoder().decode(output.stdout) };
}

/** Options of {@linkcode NvidiaSmiSampler}. */
export interface NvidiaSmiSamplerOptions {
  logger: Logger;
  /** Default: {@linkcode runNvidiaSmi}. */
  run?: NvidiaSmiRunner;
  /** Time between the end of one run and the next; default 5000 ms. */
  intervalMs?: number;
  /** Limit of one run; default 4000 ms. */
  timeoutMs?: number;
  /** The device to read (`nvidia-smi -i`: index or UUID); default every device. */
  device?: string;
}

type SamplerState = "unknown" | "reading" | "failing" | "absent";

/** Keeps the latest `nvidia-smi` reading; see the module doc. */
export class NvidiaSmiSampler {
  readonly #options: NvidiaSmiSamplerOptions;
  readonly #run: NvidiaSmiRunner;
  #reading: AcceleratorReading | null = null;
  #state: SamplerState = "unknown";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #running: Promise<void> | undefined;

  constructor(options: NvidiaSmiSamplerOptions) {
    this.#options = options;
    this.#run = options.run ?? runNvidiaSmi;
  }

  /** The latest reading; `null` when there is none (no accelerator, or the tool failed). */
  get reading(): AcceleratorReading | null {
    return this.#reading;
  }

  /** False once the binary turned out to be missing (sampling has ended). */
  get available(): boolean {
    return this.#state !== "absent";
  }

  /** Samples now, then every interval until `stop()`; resolves after the first sample. */
  start(): Promise<void> {
    this.#stopped = false;
    return this.#loop();
  }

  /** Stops sampling and waits for a run in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Runs `nvidia-smi` once (joins a run in progress) and updates the reading. */
  sampleNow(): Promise<void> {
    this.#running ??= this.#sample().finally(() => this.#running = undefined);
    return this.#running;
  }

  async #loop(): Promise<void> {
    await this.sampleNow();
    if (this.#stopped || this.#state === "absent") return;
    const timer = setTimeout(() => void this.#loop(), this.#options.intervalMs ?? 5000);
    // Sampling alone must not keep a process alive.
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  async #sample(): Promise<void> {
    if (this.#state === "absent") return;
    try {
      const output = await this.#run(
        nvidiaSmiArgs(this.#options.device),
        this.#options.timeoutMs ?? 4000,
      );
      const reading = output.success ? parseNvidiaSmi(output.stdout) : null;
      this.#reading = reading;
      if (reading === null) {
        this.#enter("failing", output.success ? "unexpected output" : "exited with an error");
      } else this.#enter("reading", undefined);
    } catch (error) {
      this.#reading = null;
      if (error instanceof Deno.errors.NotFound) this.#enter("absent", "not installed");
      else this.#enter("failing", (error as Error).message);
    }
  }

  #enter(state: SamplerState, reason: string | undefined): void {
    if (state === this.#state) return;
    const previous = this.#state;
    this.#state = state;
    const { logger } = this.#options;
    if (state === "absent") {
      logger.info("accelerator readings unavailable: nvidia-smi not found", {});
    } else if (state === "failing") {
      logger.warn("accelerator readings unavailable: nvidia-smi failed", { reason });
    } else if (previous === "failing") logger.info("accelerator readings available again", {});
  }
}
