/**
 * @module The before/after `summary.md`: one row per measure, the baseline and the full
 * configuration side by side, and the ratio after ÷ before. Pure.
 */

/** What one configuration measured. */
export interface ConfigOutcome {
  name: string;
  /** The settings that define it, for the reader. */
  settings: string;
  /** Saturation throughput (closed loop), tokens/s. */
  tokensPerS: number;
  /** Latency (ms) under the diurnal + spike schedule at the baseline's saturation rate. */
  p50: number;
  p99: number;
  /** Answers other than 200 (and failed connections) ÷ offered requests, whole run. */
  errorRate: number;
  /** Those errors by kind: HTTP status or `network`. */
  errorKinds: Record<string, number>;
  /**
   * Arrivals of the open-loop schedule the load generator did not send because 512
   * requests were already outstanding (the system fell too far behind), ÷ offered.
   */
  shedRate: number;
  /** Expert-load CV across backends (each the sum of its replicas), mean over layers. */
  backendCv: number;

  /** Expert-load CV per logical expert (what the gate chose), mean over layers. */
  logicalCv: number;
  /** Mean ÷ max of the backends' expert load (EPLB's balancedness), mean over layers. */
  backendBalancedness: number;
  /** Mean executor utilisation of the backends during the schedule. */
  utilisation: number;
  /** Balancedness of the backends' utilisation during the schedule. */
  utilisationBalancedness: number;
  /** Tokens per joule; `null` when no power reading exists on this host. */
  tokensPerJoule: number | null;
}

function fmt(value: number | null, digits: number): string {
  if (value === null || !Number.isFinite(value)) return "n/a";
  return value.toFixed(digits);
}

function ratio(after: number | null, before: number | null): string {
  if (after === null || before === null || !Number.isFinite(after) || !(before > 0)) return "n/a";
  return `${(after / before).toFixed(2)}×`;
}

/** `summary.md` for `before` (baseline) and `after` (Switchyard), with context lines. */
export function summaryMarkdown(
  before: ConfigOutcome,
  after: ConfigOutcome,
  context: readonly string[],
): string {
  const rows: [string, number | null, number | null, number][] = [
    ["throughput at saturation (tokens/s)", before.tokensPerS, after.tokensPerS, 0],
    ["p50 latency under the schedule (ms)", before.p50, after.p50, 1],
    ["p99 latency under the schedule (ms)", before.p99, after.p99, 1],
    ["error rate (non-200 answers)", before.errorRate, after.errorRate, 4],
    ["shed rate (512 already outstanding)", before.shedRate, after.shedRate, 4],
    ["expert-load CV across backends (EPLB's target)", before.backendCv, after.backendCv, 3],
    ["expert-load CV, per logical expert", before.logicalCv, after.logicalCv, 3],
    [
      "expert-load balancedness across backends (mean/max)",
      before.backendBalancedness,
      after.backendBalancedness,
      3,
    ],
    ["backend utilisation (mean)", before.utilisation, after.utilisation, 3],
    [
      "backend utilisation balancedness",
      before.utilisationBalancedness,
      after.utilisationBalancedness,
      3,
    ],
    ["tokens per joule", before.tokensPerJoule, after.tokensPerJoule, 2],
  ];
  const lines = [
    "# Switchyard before/after",
    "",
    ...context.map((line) => `- ${line}`),
    `- before (${before.name}): ${before.settings}`,
    `- after (${after.name}): ${after.settings}`,
    "",
    "| measure | before | after | after ÷ before |",
    "|---|---:|---:|---:|",
    ...rows.map(([name, b, a, digits]) =>
      `| ${name} | ${fmt(b, digits)} | ${fmt(a, digits)} | ${ratio(a, b)} |`
    ),
    "",
  ];
  const kinds = (o: ConfigOutcome) =>
    Object.entries(o.errorKinds).map(([kind, n]) => `${kind}: ${n}`).join(", ") || "none";
  lines.push(`Errors by kind — before: ${kinds(before)}; after: ${kinds(after)}.`, "");
  if (before.tokensPerJoule === null && after.tokensPerJoule === null) {
    lines.push("Tokens per joule: n/a — no power reading on this host (no `nvidia-smi`).", "");
  }
  return lines.join("\n");
}
