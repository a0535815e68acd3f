// deno-lint-ignore-file no-console
/**
 * @module `deno task advise [--url http://127.0.0.1:8080] [--refresh] [--apply <id>]`:
 * prints a running router's advice (`GET /api/advice`): for each topic the verdict, the
 * evidence, the expected effect and the risk. `--apply replacement|gate_bias` applies a
 * live recommendation with the admin token from `SWITCHYARD_AUTH__ADMIN_TOKEN` or the
 * launcher's `data/admin_token` file.
 */
import { parseArgs } from "node:util";
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

const { values } = parseArgs({
  args: Deno.args,
  options: {
    url: { type: "string", default: "http://127.0.0.1:8080" },
    refresh: { type: "boolean", default: false },
    apply: { type: "string" },
  },
});

try {
  if (values.apply !== undefined) {
    const token = await readAdminToken(Deno.env.toObject(), ADMIN_TOKEN_FILE);
    if (token === undefined) {
      throw new Error(
        "no admin token: set SWITCHYARD_AUTH__ADMIN_TOKEN or start with deno task start",
      );
    }
    // Apply what the router last showed: read the advice first.
    await fetch(new URL("/api/advice", values.url)).then((r) => r.body?.cancel());
    const response = await fetch(new URL("/api/advice/apply", values.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ id: values.apply }),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.error}`);
    console.log(JSON.stringify(body, null, 2));
    Deno.exit(0);
  }
  const response = await fetch(
    new URL(`/api/advice${values.refresh ? "?refresh=1" : ""}`, values.url),
  );
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const body: { advice: AdviceBody[] } = await response.json();
  for (const advice of body.advice) {
    const verdict = advice.recommended ? `RECOMMENDED (apply: ${advice.apply})` : "no change";
    console.log(`\n■ ${advice.title} — ${verdict}`);
    for (const line of advice.evidence) console.log(`    evidence: ${line}`);
    console.log(`    effect:   ${advice.expected_effect}`);
    console.log(`    risk:     ${advice.risk}`);
    if (advice.settings) console.log(`    settings: ${JSON.stringify(advice.settings)}`);
  }
} catch (error) {
  console.error(`Cannot ask the router at ${values.url}: ${(error as Error).message}`);
  Deno.exit(1);
}
