// deno-lint-ignore-file no-console
/**
 * @module `deno task advise [--url <router>] [--config <file>] [--refresh] [--apply <id>]`:
 * prints a running router's advice (`GET /api/advice`): for each topic the verdict, the
 * evidence, the expected effect and the risk. `--apply replacement|gate_bias` applies a
 * live recommendation with the admin token from `SWITCHYARD_AUTH__ADMIN_TOKEN` or the
 * launcher's `data/admin_token` file. The router is found like `deno task start` finds it.
 */
import { parseCli } from "./cli/cli_args.ts";
import {
  getJson,
  ROUTER_OPTIONS,
  routerProblem,
  type RouterTarget,
  routerTargetOrReport,
} from "./client/router_target.ts";
import { ADMIN_TOKEN_FILE, readAdminToken } from "./token_files.ts";

interface AdviceBody {
  id: string;
  title: string;
  recommended: boolean;
  evidence: string[];
  expected_effect: string;
  risk: string;
  apply: string;
  settings?: Record<string, unknown>;
}

const { values } = parseCli({
  name: "deno task advise",
  summary: "Prints a running router's advice (GET /api/advice): per topic the verdict, the\n" +
    "evidence, the expected effect and the risk. --apply applies a live recommendation\n" +
    "(admin token from SWITCHYARD_AUTH__ADMIN_TOKEN or the file deno task start writes).",
  options: {
    refresh: { type: "boolean", description: "recompute the advice now instead of the cached one" },
    apply: {
      type: "string",
      value: "<id>",
      description: "apply a recommendation: replacement | gate_bias",
    },
    ...ROUTER_OPTIONS,
  },
});

const target = await routerTargetOrReport(values, Deno.env.toObject(), console.error);
if (target === undefined) Deno.exit(1);

/**
 * The advice at `path`; while the router answers its precomputed report (`partial`: the
 * gate-bias evaluation still running), asks again every second, up to 60 s.
 */
async function fullAdvice(target: RouterTarget, path: string): Promise<{ advice: AdviceBody[] }> {
  for (let i = 0;; i++) {
    const body: { partial?: boolean; advice: AdviceBody[] } = await getJson(
      target,
      path,
      "read the advice",
    );
    if (body.partial !== true || i >= 60) return body;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

try {
  if (values.apply !== undefined) {
    const token = await readAdminToken(Deno.env.toObject(), ADMIN_TOKEN_FILE);
    if (token === undefined) {
      throw new Error(
        "Cannot apply advice: no admin token: set SWITCHYARD_AUTH__ADMIN_TOKEN or start with " +
          "deno task start",
      );
    }
    // Apply what the router last showed: read the (full) advice first.
    await fullAdvice(target, "/api/advice");
    let response: Response;
    try {
      response = await target.fetch(`${target.url}/api/advice/apply`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ id: values.apply }),
      });
    } catch (error) {
      throw new Error(
        routerProblem(target, "apply advice", `is unreachable (${(error as Error).message})`),
      );
    }
    const body = await response.json();
    if (!response.ok) {
      throw new Error(`Cannot apply advice: HTTP ${response.status}: ${body.error}`);
    }
    console.log(JSON.stringify(body, null, 2));
    Deno.exit(0);
  }
  const body = await fullAdvice(target, `/api/advice${values.refresh ? "?refresh=1" : ""}`);
  for (const advice of body.advice) {
    const verdict = advice.recommended ? `RECOMMENDED (apply: ${advice.apply})` : "no change";
    console.log(`\n■ ${advice.title} — ${verdict}`);
    for (const line of advice.evidence) console.log(`    evidence: ${line}`);
    console.log(`    effect:   ${advice.expected_effect}`);
    console.log(`    risk:     ${advice.risk}`);
    if (advice.settings) console.log(`    settings: ${JSON.stringify(advice.settings)}`);
  }
} catch (error) {
  console.error((error as Error).message);
  Deno.exit(1);
} finally {
  target.fetch.close();
}
