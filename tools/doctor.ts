// deno-lint-ignore-file no-console
/**
 * @module `deno task doctor [--url http://127.0.0.1:8080]`: asks a running router's
 * `GET /api/doctor` and prints the checklist with the measured value next to each
 * answer, then the verdict. Exit code 0 when answered, 1 when the router cannot be asked.
 */
import { parseArgs } from "node:util";

interface Check {
  question: string;
  answer: string;
  measured: string;
}

const { values } = parseArgs({
  args: Deno.args,
  options: { url: { type: "string", default: "http://127.0.0.1:8080" } },
});

let body: { checks: Check[]; yes: number; verdict: string };
try {
  const response = await fetch(new URL("/api/doctor", values.url));
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  body = await response.json();
} catch (error) {
  console.error(`Cannot ask the router at ${values.url}: ${(error as Error).message}`);
  Deno.exit(1);
}

const width = Math.max(...body.checks.map((check) => check.question.length));
console.log("Switchyard doctor — from live data\n");
for (const check of body.checks) {
  console.log(`  ${check.question.padEnd(width)}  ${check.answer.padEnd(7)}  ${check.measured}`);
}
const advice: Record<string, string> = {
  "deploy now": "3 or more yes: deploy expert balancing now.",
  "pilot": "1–2 yes: run a pilot on part of the traffic.",
  "not needed": "no yes: expert balancing is not needed for this load.",
};
console.log(`\nVerdict: ${body.verdict} (${body.yes} yes) — ${advice[body.verdict] ?? ""}`);
