/**
 * @module The doctor: answers, from measured values, the checklist operators use to
 * decide whether expert balancing is worth deploying, and gives the verdict.
 *
 * Checks (each "yes" is a reason to deploy):
 * 1. more than 16 routed experts per layer;
 * 2. accelerator (executor) utilisation below 70 % (mean over the last 10 minutes of load
 *    rounds in which the pool served traffic);
 * 3. latency varying more than 30 % (coefficient of variation of request latency);
 * 4. the top 10 % of experts carrying more than 50 % of the routed load;
 * 5. more than 100 M tokens per day (the measured rate extrapolated to 24 h).
 * Verdict: 3 or more "yes" → deploy now; 1–2 → pilot; none → not needed. A check
 * without data answers "unknown" and counts as neither.
 */

/** Measured inputs; `undefined` where there is no data yet. */
export interface DoctorInputs {
  /** Routed experts per layer of the served model. */
  experts: number | undefined;
  /** Mean executor utilisation of the reporting backends while serving, in [0, 1]. */
  utilisation: number | undefined;
  /** Coefficient of variation of recent request latencies. */
  latencyCv: number | undefined;
  /** Share of routed load on the top 10 % of experts (mean over layers), in [0, 1]. */
  top10Share: number | undefined;
  /** Tokens per second through the pool, over the measured window. */
  tokensPerS: number | undefined;
}

/** One answered question. */
export interface DoctorCheck {
  id: "experts" | "utilisation" | "latency_variation" | "hot_experts" | "tokens_per_day";
  question: string;
  answer: "yes" | "no" | "unknown";
  /** The measured value the answer rests on (`null` when unknown). */
  value: number | null;
  /** The value as an operator reads it, e.g. `64 experts`, `43 %`. */
  measured: string;
}

/** The doctor's report. */
export interface DoctorReport {
  checks: DoctorCheck[];
  yes: number;
  verdict: "deploy now" | "pilot" | "not needed";
}

const TOKENS_PER_DAY = 100e6;
const SECONDS_PER_DAY = 86_400;

function percent(value: number): string {
  return `${(value * 100).toFixed(0)} %`;
}

function check(
  id: DoctorCheck["id"],
  question: string,
  value: number | undefined,
  isYes: (value: number) => boolean,
  format: (value: number) => string,
): DoctorCheck {
  if (value === undefined || !Number.isFinite(value)) {
    return { id, question, answer: "unknown", value: null, measured: "no data yet" };
  }
  return { id, question, answer: isYes(value) ? "yes" : "no", value, measured: format(value) };
}

/** Answers the checklist from `inputs`; pure. */
export function diagnose(inputs: DoctorInputs): DoctorReport {
  const checks = [
    check(
      "experts",
      "More than 16 experts per layer?",
      inputs.experts,
      (n) => n > 16,
      (n) => `${n} experts`,
    ),
    check(
      "utilisation",
      "Accelerator utilisation below 70 %?",
      inputs.utilisation,
      (u) => u < 0.7,
      percent,
    ),
    check(
      "latency_variation",
      "Latency varying more than 30 %?",
      inputs.latencyCv,
      (cv) => cv > 0.3,
      (cv) => `CV ${percent(cv)}`,
    ),
    check(
      "hot_experts",
      "Top 10 % of experts carry more than 50 % of the load?",
      inputs.top10Share,
      (share) => share > 0.5,
      percent,
    ),
    check(
      "tokens_per_day",
      "More than 100 M tokens per day?",
      inputs.tokensPerS === undefined ? undefined : inputs.tokensPerS * SECONDS_PER_DAY,
      (perDay) => perDay > TOKENS_PER_DAY,
      (perDay) => `${(perDay / 1e6).toFixed(1)} M tokens/day (extrapolated)`,
    ),
  ];
  const yes = checks.filter((c) => c.answer === "yes").length;
  return { checks, yes, verdict: yes >= 3 ? "deploy now" : yes >= 1 ? "pilot" : "not needed" };
}
