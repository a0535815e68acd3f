// deno-lint-ignore-file no-console
/**
 * @module `deno task plan`: plans expert placement for a JSON input read from a file argument
 * or stdin, and prints `{ phy2log, log2phy, logcnt, balancedness }` as JSON.
 *
 *   deno task plan input.json --policy global
 *   cat input.json | deno task plan
 *
 * The input is `{ weight, num_replicas, num_groups, num_nodes, num_gpus }` (see
 * `router/control/balancer/placement_input.ts`). Bad input prints the reason to stderr and exits 1.
 */
import { type PlacementPolicy, planPlacement } from "../router/control/balancer/mod.ts";
import { parseCli } from "./cli/cli_args.ts";

const POLICIES: readonly PlacementPolicy[] = ["auto", "hierarchical", "global"];

/** Plans the placement for the JSON `text` and returns the JSON to print. */
export function planFromText(text: string, policy: string = "auto"): string {
  if (!(POLICIES as readonly string[]).includes(policy)) {
    throw new RangeError(
      `Cannot plan placement: "--policy" must be one of ${POLICIES.join(", ")}, got "${policy}"`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(
      `Cannot plan placement: input is not valid JSON (${(error as Error).message})`,
    );
  }
  const plan = planPlacement(raw as never, { policy: policy as PlacementPolicy });
  const { phy2log, log2phy, logcnt, balancedness } = plan;
  return JSON.stringify({ phy2log, log2phy, logcnt, balancedness });
}

async function readInput(path: string | undefined): Promise<string> {
  if (path !== undefined && path !== "-") {
    try {
      return await Deno.readTextFile(path);
    } catch (error) {
      throw new Error(`Cannot read input file "${path}": ${(error as Error).message}`);
    }
  }
  return await new Response(Deno.stdin.readable).text();
}

async function main(): Promise<number> {
  const { values, positionals } = parseCli({
    name: "deno task plan",
    positionals: "[input.json | -]",
    summary:
      "Plans expert placement offline for a JSON input read from a file or stdin and prints\n" +
      "{ phy2log, log2phy, logcnt, balancedness } as JSON. The input is { weight, num_replicas,\n" +
      "num_groups, num_nodes, num_gpus } (router/control/balancer/placement_input.ts). It does not\n" +
      "talk to a router: GET /api/plan on the router shows the live plan.",
    options: {
      policy: {
        type: "string",
        default: "auto",
        value: `<${POLICIES.join("|")}>`,
        description: "hierarchical (groups → nodes → GPUs) or global; auto picks",
      },
    },
  });
  try {
    if (positionals.length > 1) {
      throw new RangeError(
        `Cannot plan placement: expected at most one input file, got ${positionals.length}`,
      );
    }
    console.log(planFromText(await readInput(positionals[0]), values.policy));
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main());
