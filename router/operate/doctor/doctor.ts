/**
 * @module The doctor: answers, from measured values, the checklist operators use to
 * decide whether expert balancing is worth deploying, and gives the verdict.
 *
 * Checks (each "yes" is a reason to deploy):
 * 1. more than 16 routed experts per layer;
 * 2. the pool below 70 % of its capacity: the saturation signal (`router/control/load/saturation.ts`:
 *    device busy, host busy, queueing, shedding — the 90th percentile over the last 10
 *    minutes of load rounds in which the pool served traffic) below 0.7 and nothing shed
 *    in those rounds (the router's 429s at its limits, backends' 503s: a pool that sheds
 *    runs at capacity, whatever its executors' busy time says), with the share of rounds
 *    that shed and executor utilisation shown beside it; from backends that do not report
 *    saturation, executor utilisation alone;
 * 3. latency varying more than 30 % (coefficient of variation of request latency);
 * 4. the top 10 % of experts carrying more than 50 % of the routed load;
 * 5. more than 100 M tokens per day (the measured rate extrapolated to 24 h).
 * Verdict: 3 or more "yes" → deploy now; 1–2 → pilot; none → not needed. A check
 * without data answers "unknown" and counts as neither.
 *
 * **Minimum data**: until the router has answered {@linkcode MIN_DOCTOR_REQUESTS}
 * requests spanning at least {@linkcode MIN_DOCTOR_SPAN_MS} within its window, the
 * verdict is "not enough data" (the checks are still shown, with what they measured).
 */

/** Requests the doctor needs before it gives a verdict. */
export const MIN_DOCTOR_REQUESTS = 100;
/** Time those requests must span (ms) before the doctor gives a verdict. */
export const MIN_DOCTOR_SPAN_MS = 60_000;

/** Measured inputs; `undefined` where there is no data yet. */
export interface DoctorInputs {
  /** Routed experts per layer of the served model. */
  experts: number | undefined;
  /** Mean executor utilisation of the reporting backends while serving, in [0, 1]. */
  utilisation: number | undefined;
  /** Pool saturation while serving (90th percentile), in [0, 1], and its usual bottleneck. */
  saturation?: number | undefined;
  /** Share of the busy rounds in which the router or a backend shed requests. */
  shedShare?: number | undefined;
  bottleneck?: string | undefined;
  /** Requests answered in the doctor's window and the time they span (ms). */
  traffic?: { requests: number; spanMs: number } | undefined;
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
  verdict: "deploy now" | "pilot" | "not needed" | "not enough data";
  /** Why the verdict is withheld; `null` when given. */
  insufficient: string | null;
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
    loadCheck(inputs),
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
  const insufficient = insufficientData(inputs.traffic);
  if (insufficient !== null) return { checks, yes, verdict: "not enough data", insufficient };
  return {
    checks,
    yes,
    verdict: yes >= 3 ? "deploy now" : yes >= 1 ? "pilot" : "not needed",
    insufficient: null,
  };
}

/** Why the traffic seen so far is too little for a verdict; `null` when it is enough. */
export function insufficientData(traffic: DoctorInputs["traffic"]): string | null {
  const requests = traffic?.requests ?? 0;
  const spanMs = traffic?.spanMs ?? 0;
  if (requests >= MIN_DOCTOR_REQUESTS && spanMs >= MIN_DOCTOR_SPAN_MS) return null;
  return `not enough data: ${requests} requests over ${Math.round(spanMs / 1000)} s ` +
    `(needs ${MIN_DOCTOR_REQUESTS} requests over ${MIN_DOCTOR_SPAN_MS / 1000} s)`;
}

/** Check 2: the saturation signal, executor utilisation beside it. */
function loadCheck(inputs: DoctorInputs): DoctorCheck {
  const question = "Pool below 70 % of its capacity (saturation)?";
  const { saturation, utilisation } = inputs;
  if (saturation !== undefined && Number.isFinite(saturation)) {
    const device = utilisation === undefined ? "" : `, executor busy ${percent(utilisation)}`;
    const by = inputs.bottleneck ? ` (${inputs.bottleneck})` : "";
    const shedShare = inputs.shedShare ?? 0;
    const shed = shedShare > 0 ? `, shedding in ${percent(shedShare)} of busy rounds` : "";
    return {
      id: "utilisation",
      question,
      answer: saturation < 0.7 && shedShare === 0 ? "yes" : "no",
      value: saturation,
      measured: `saturation ${percent(saturation)}${by}${shed}${device}`,
    };
  }
  return check(
    "utilisation",
    question,
    utilisation,
    (u) => u < 0.7,
    (u) => `executor busy ${percent(u)} (no saturation reported)`,
  );
}
