// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:series`: how many Prometheus series a backend's `/metrics`
 * exposes per `metrics.expert_detail` mode, for model shapes given as `LAYERSxEXPERTS`
 * (default `2x32` — the demo model — and `61x256`, DeepSeek-V3-sized). Each shape is
 * rendered by the real {@linkcode BackendMetrics} from a load report in which one backend
 * hosts every routed expert (the worst case: a backend hosting a share of the experts
 * has that share of the per-expert series) with Zipf-skewed token counts, and the
 * exposition text is parsed and counted. Prints a Markdown table.
 */
import { BackendMetrics, type BackendSnapshot } from "../../gpu-backend/metrics/backend_metrics.ts";
import type { ExpertDetail } from "../../gpu-backend/metrics/routed_token_samples.ts";
import type { LoadReport, PartLoad } from "../../shared/load_report.ts";
import { parseExposition } from "../../shared/metrics/parse_exposition.ts";
import { parseCli } from "../cli/cli_args.ts";

const ROUTED = /^switchyard_(expert|layer)_(tokens|executions)_total$/;

/** Series of a backend's `/metrics` at `detail` for a `layers × experts` model. */
export async function countSeries(
  layers: number,
  experts: number,
  detail: ExpertDetail,
  topExperts = 8,
): Promise<{ routed: number; total: number }> {
  const parts: PartLoad[] = [];
  for (let layer = 0; layer < layers; layer++) {
    parts.push(part(layer, "gate", -1, 1000));
    for (let expert = 0; expert < experts; expert++) {
      // Zipf-like skew, shifted per layer so each layer has its own hot experts.
      const rank = (expert + layer * 7) % experts;
      parts.push(part(layer, "expert", expert, Math.round(10_000 / (rank + 1))));
    }
  }
  const report: LoadReport = {
    backend: "backend-1",
    model: "m",
    at: 0,
    uptimeMs: 1000,
    executionProvider: "cpu",
    slots: 1,
    busyMs: 0,
    requests: 0,
    tokens: 0,
    inFlightRequests: 0,
    inFlightRows: 0,
    rejected: 0,
    memory: { rssBytes: 0, heapUsedBytes: 0 },
    parts,
  };
  const snapshot: BackendSnapshot = {
    report,
    batches: [],
    executor: { slots: 1, executions: 0, rows: 0, busyMs: 0, queued: 0, running: 0 },
    engine: { inFlightRequests: 0, inFlightRows: 0, requests: 0, rows: 0, rejected: 0, failed: 0 },
    placement: { active: 1, staged: null, coldStarts: 0 },
  };
  const metrics = new BackendMetrics({
    version: "bench",
    expertDetail: detail,
    topExperts,
    providerFallbacks: 0,
    snapshot: () => snapshot,
  });
  const samples = parseExposition(await metrics.render()).samples;
  return { routed: samples.filter((s) => ROUTED.test(s.name)).length, total: samples.length };
}

function part(layer: number, kind: PartLoad["kind"], expert: number, tokens: number): PartLoad {
  const name = kind === "gate" ? `L${layer}/gate` : `L${layer}/E${expert}`;
  return { part: name, layer, kind, expert, tokens, executions: tokens, busyMs: 0, queueDepth: 0 };
}

if (import.meta.main) {
  const { values } = parseCli({
    name: "deno task bench:series",
    summary:
      "Counts the Prometheus series of a backend's /metrics per metrics.expert_detail mode\n" +
      "(expert, top, backend) for model shapes LAYERSxEXPERTS, one backend hosting every expert.",
    options: {
      shapes: {
        type: "string",
        default: "2x32,61x256",
        value: "<LxE,…>",
        description: "model shapes, layers x experts",
      },
      top: { type: "string", default: "8", value: "<n>", description: "N of the top mode" },
    },
  });
  const top = Number(values.top);
  console.log(`Command: deno task bench:series --shapes ${values.shapes} --top ${top}\n`);
  console.log(
    "| shape (layers × experts) | mode | routed-token series | all series of /metrics |",
  );
  console.log("| --- | --- | ---: | ---: |");
  for (const shape of values.shapes.split(",")) {
    const [layers, experts] = shape.split("x").map(Number) as [number, number];
    for (const detail of ["expert", "top", "backend"] as const) {
      const { routed, total } = await countSeries(layers, experts, detail, top);
      const mode = detail === "top" ? `top (N = ${top})` : detail;
      console.log(`| ${layers} × ${experts} | ${mode} | ${routed} | ${total} |`);
    }
  }
}
