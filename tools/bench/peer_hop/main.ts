// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:peer-hop`: what a layer that crosses backends costs, measured
 * from outside, in one run.
 *
 *   Step 1: the expert channel alone (`peer_hop/channel.ts`): round trips of 1, 8 and
 *           64-row layer items to a peer that computes nothing, over the channel's
 *           TCP_NODELAY socket and over Deno's own WebSocket (the cause of the old ~45 ms
 *           per hop), with host-thread µs per row on each side.
 *   Step 2–3: the stack (`peer_hop/stack.ts`), once per `backend.overlap_hops` (auto,
 *           always, never): idle p50 per crossing layer count, straight to each backend and
 *           through the router; under a closed loop, the share of hop time hidden under
 *           local work and the channel's CPU per row.
 *
 * `--out PREFIX` writes PREFIX.md (the report, starting with the command, commit, date
 * and machine) and PREFIX.json (every figure).
 */
import { join } from "node:path";
import { DEMO_MODEL_OPTION, parseCli } from "../../cli/cli_args.ts";
import { benchModelDir } from "../bench_model.ts";
import { demoTokens, loadDemoTraffic } from "../../model/traffic.ts";
import { createRandom } from "../../model/prng.ts";
import { prepareWorkload } from "../workload.ts";
import { type ChannelCell, measureChannel } from "./channel.ts";
import { measureStacks } from "./stack.ts";
import { formatPeerHopReport } from "./report.ts";
import { resultsHeader } from "../results_header.ts";
import { computeLimit } from "../compute_limit.ts";
import type { ModelManifest } from "../../../shared/model_manifest.ts";

const { values } = parseCli({
  name: "deno task bench:peer-hop",
  summary:
    "What a layer that crosses backends costs: the expert channel alone (TCP_NODELAY socket vs\nDeno's WebSocket), then the stack with each backend.overlap_hops (auto, always, never) — idle p50 per crossing layer,\ndirect and through the router, and under load the hidden share and CPU per row.",
  options: {
    model: DEMO_MODEL_OPTION,
    trips: {
      type: "string",
      default: "40",
      value: "<n>",
      description: "channel round trips per cell and round",
    },
    idle: { type: "string", default: "150", value: "<n>", description: "idle requests per target" },
    "gap-ms": {
      type: "string",
      default: "20",
      value: "<ms>",
      description: "gap between idle requests",
    },
    "load-s": {
      type: "string",
      default: "30",
      value: "<s>",
      description: "closed-loop seconds per pool (over all rounds)",
    },
    rounds: {
      type: "string",
      default: "3",
      value: "<n>",
      description: "rounds of the stack steps, the pools' order rotating",
    },
    concurrency: {
      type: "string",
      default: "16",
      value: "<n>",
      description: "closed-loop clients",
    },
    out: { type: "string", value: "<prefix>", description: "write PREFIX.md and PREFIX.json" },
  },
});

const modelDir = await benchModelDir({
  dir: String(values.model),
  simulated: false,
  experts: 32,
  topK: 2,
});
const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json"))) as ModelManifest;
const traffic = await loadDemoTraffic(modelDir);
const random = createRandom(7);
const types = traffic?.request_types ?? ["chat"];
const tokens = Array.from(
  { length: 64 },
  (_, i) => demoTokens(traffic!, types[i % types.length]!, 1, random),
);
const load = prepareWorkload({
  dModel: manifest.d_model,
  traffic,
  count: 256,
  tokens: { min: 1, max: 8 },
});

console.log("Step 1: the expert channel alone");
const channel: ChannelCell[] = await measureChannel({
  width: manifest.d_model,
  sizes: [1, 8, 64],
  trips: Number(values.trips),
  rounds: 2,
});
console.log("Steps 2–3: the stack, one pool per backend.overlap_hops, rotating rounds");
const stacks = await measureStacks({
  modelDir,
  model: manifest.name,
  dModel: manifest.d_model,
  modes: ["auto", "always", "never"],
  rounds: Number(values.rounds),
  idleRequests: Number(values.idle),
  gapMs: Number(values["gap-ms"]),
  load,
  concurrency: Number(values.concurrency),
  loadS: Number(values["load-s"]),
  tokens,
});
const limit = await computeLimit(modelDir, manifest);
const command = ["deno task bench:peer-hop", ...Deno.args].join(" ");
const header = await resultsHeader({
  command,
  limit: `${Math.round(limit.tokensPerS)} tokens/s per core (single-thread MatMul at batch 256)`,
  notes: [
    `model ${manifest.name}: ${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, d_model ${manifest.d_model}`,
    "2 backends + router on loopback, static placement (contiguous blocks), onnxruntime on each backend's main thread; the client shares the 2 cores",
  ],
});
const report = formatPeerHopReport({ header, channel, stacks });
console.log(report);
if (values.out) {
  await Deno.writeTextFile(`${values.out}.md`, report);
  await Deno.writeTextFile(
    `${values.out}.json`,
    JSON.stringify({ channel, stacks, limit }, null, 2),
  );
  console.log(`Wrote ${values.out}.md and ${values.out}.json`);
}
