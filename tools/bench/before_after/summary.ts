/**
 * @module The before/after `summary.md`: one row per measure, every configuration side by
 * side (two baselines, Switchyard's defaults, optionally a labelled tuned variant), and
 * the ratio of the default configuration to each baseline. Pure.
 */

/** What one configuration measured. */
export interface ConfigOutcome {
  name: string;
  /** The settings that define it, for the reader. */
  settings: string;
  /** Saturation throughput (closed loop), tokens/s. */
  tokensPerS: number;
  /** Latency (ms) under the diurnal + spike schedule at the common offered rate. */
  p50: number;
  p99: number;
  /** Answers other than 200 (and failed connections) ÷ requests sent, whole run. */
  errorRate: number;
  /** Those errors by kind: HTTP status or `network`. */
  errorKinds: Record<string, number>;
  /**
   * Open-loop arrivals of the schedule the load generator did not send because 512
   * requests were already outstanding (the system fell too far behind) ÷ the schedule's
   * open-loop arrivals (closed-loop phases never shed and are not counted).
   */
  shedRate: number;
  /** Expert-load CV across backends (each the sum of its replicas), mean over layers. */
  backendCv: number;
  /** Expert-load CV per logical expert (what the gate chose), mean over layers. */
  logicalCv: number;
  /** Mean ÷ max of the backends' expert load (EPLB's balancedness), mean over layers. */
  backendBalancedness: number;
  /** Mean executor utilisation of the backends during the schedule; null when none reported. */
  utilisation: number | null;
  /** Balancedness of the backends' utilisation during the schedule; null when none reported. */
  utilisationBalancedness: number | null;
  /** Tokens per joule; `null` when no power reading exists on this host. */
  tokensPerJoule: number | null;
}

/** Which outcomes are the baselines and which is "after". */
export interface SummaryRoles {
  /** Names of the baseline configurations (ratios are taken against each). */
  baselines: readonly string[];
  /** Name of the default-configuration run the ratios are for. */
  after: string;
}

function fmt(value: number | null, digits: number): string {
  if (value === null || !Number.isFinite(value)) return "n/a";
  return value.toFixed(digits);
}

function ratio(after: number | null, before: number | null): string {
  if (after === null || before === null || !Number.isFinite(after) || !(before > 0)) return "n/a";
  return `${(after / before).toFixed(2)}×`;
}

const MEASURES: [string, (o: ConfigOutcome) => number | null, number][] = [
  ["throughput at saturation (tokens/s)", (o) => o.tokensPerS, 0],
  ["p50 latency under the schedule (ms)", (o) => o.p50, 1],
  ["p99 latency under the schedule (ms)", (o) => o.p99, 1],
  ["error rate (non-200 answers ÷ sent)", (o) => o.errorRate, 4],
  ["shed rate (open-loop arrivals not sent: 512 outstanding)", (o) => o.shedRate, 4],
  ["expert-load CV across backends (EPLB's target)", (o) => o.backendCv, 3],
  ["expert-load CV, per logical expert", (o) => o.logicalCv, 3],
  ["expert-load balancedness across backends (mean/max)", (o) => o.backendBalancedness, 3],
  ["backend utilisation (mean)", (o) => o.utilisation, 3],
  ["backend utilisation balancedness", (o) => o.utilisationBalancedness, 3],
  ["tokens per joule", (o) => o.tokensPerJoule, 2],
];

/** `summary.md` for `outcomes` (each baseline, the default run, extras) with context lines. */
export function summaryMarkdown(
  outcomes: readonly ConfigOutcome[],
  roles: SummaryRoles,
  context: readonly string[],
): string {
  const after = outcomes.find((o) => o.name === roles.after);
  if (after === undefined) throw new RangeError(`No outcome named "${roles.after}"`);
  const baselines = roles.baselines.map((name) => {
    const found = outcomes.find((o) => o.name === name);
    if (found === undefined) throw new RangeError(`No outcome named "${name}"`);
    return found;
  });
  const header = [
    "measure",
    ...outcomes.map((o) => o.name),
    ...baselines.map((b) => `${after.name} ÷ ${b.name}`),
  ];
  const lines = [
    "# Switchyard before/after",
    "",
    ...context.map((line) => `- ${line}`),
    ...outcomes.map((o) => `- ${o.name}: ${o.settings}`),
    "",
    `| ${header.join(" | ")} |`,
    `|---|${header.slice(1).map(() => "---:").join("|")}|`,
    ...MEASURES.map(([name, pick, digits]) =>
      `| ${
        [
          name,
          ...outcomes.map((o) => fmt(pick(o), digits)),
          ...baselines.map((b) => ratio(pick(after), pick(b))),
        ].join(" | ")
      } |`
    ),
    "",
  ];
  const kinds = (o: ConfigOutcome) =>
    Object.entries(o.errorKinds).map(([kind, n]) => `${kind}: ${n}`).join(", ") || "none";
  lines.push(`Errors by kind — ${outcomes.map((o) => `${o.name}: ${kinds(o)}`).join("; ")}.`, "");
  if (outcomes.every((o) => o.tokensPerJoule === null)) {
    lines.push("Tokens per joule: n/a — no power reading on this host (no `nvidia-smi`).", "");
  }
  if (outcomes.some((o) => o.utilisation === null)) {
    lines.push("Utilisation n/a: no backend reported one during the schedule.", "");
  }
  return lines.join("\n");
}
