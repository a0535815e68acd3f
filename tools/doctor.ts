// deno-lint-ignore-file no-console
/**
 * @module `deno task doctor [--url <router>] [--config <file>]`: asks a running router's
 * `GET /api/doctor` and prints the checklist with the measured value next to each
 * answer, then the verdict. The router is found like `deno task start` finds it. Exit
 * code 0 when answered, 1 when the router cannot be asked (the message says which URL
 * was tried and how to pass another).
 */
import { parseCli } from "./cli/cli_args.ts";
import { getJson, ROUTER_OPTIONS, routerTargetOrReport } from "./client/router_target.ts";

interface Check {
  question: string;
  answer: string;
  measured: string;
}

const { values } = parseCli({
  name: "deno task doctor",
  summary: "Asks a running router (GET /api/doctor) whether this pool needs expert balancing:\n" +
    "the checklist with the measured value next to each answer, then the verdict.",
  options: ROUTER_OPTIONS,
});

const target = await routerTargetOrReport(values, Deno.env.toObject(), console.error);
if (target === undefined) Deno.exit(1);
let body: { checks: Check[]; yes: number; verdict: string; insufficient?: string | null };
try {
  body = await getJson(target, "/api/doctor", "ask the doctor");
} catch (error) {
  console.error((error as Error).message);
  Deno.exit(1);
} finally {
  target.fetch.close();
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
  "not enough data": body.insufficient ?? "too little traffic yet to judge.",
};
console.log(`\nVerdict: ${body.verdict} (${body.yes} yes) — ${advice[body.verdict] ?? ""}`);
