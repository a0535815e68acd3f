/**
 * A real Prometheus scrapes a test pool with the shipped `deploy/prometheus/prometheus.yml`
 * — same jobs, paths and backend bearer-token file, only the targets moved to the test
 * ports, a 1 s interval and the token file in a temp dir — and Switchyard series come
 * back from its query API: every target up (so the backends accepted the token),
 * `switchyard_build_info` from all three, and a backend's expert token counter. With the
 * shipped rules loaded (`deploy/prometheus/rules/switchyard.yml`) and traffic flowing,
 * every query of the Grafana dashboard (`deploy/grafana/dashboards/*.json`, template
 * variables set to "all") returns data.
 */
import assert from "node:assert/strict";
import { commandAvailable } from "./_support/system_tools.ts";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { freePort, startPool } from "../tools/pool/processes.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const DEPLOYED = new URL("../deploy/prometheus/prometheus.yml", import.meta.url);

/** The parts of prometheus.yml this test reads and rewrites. */
interface ScrapeConfig {
  job_name: string;
  metrics_path: string;
  scrape_interval?: string;
  authorization?: { type: string; credentials_file: string };
  static_configs: Array<{ targets: string[] }>;
}
interface PrometheusConfig {
  global: Record<string, string>;
  rule_files?: string[];
  scrape_configs: ScrapeConfig[];
}

const DASHBOARDS = new URL("../deploy/grafana/dashboards/", import.meta.url);
const RULES = new URL("../deploy/prometheus/rules/switchyard.yml", import.meta.url);

/** Every Prometheus query of the shipped dashboards: `[panel title, expr]`. */
async function dashboardQueries(): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const entry of Deno.readDir(DASHBOARDS)) {
    if (!entry.name.endsWith(".json")) continue;
    const dashboard = JSON.parse(await Deno.readTextFile(new URL(entry.name, DASHBOARDS)));
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) out.push([panel.title, target.expr]);
    }
  }
  return out;
}

/** The deployed config pointed at the test pool. */
function testConfig(
  deployed: PrometheusConfig,
  targets: { router: string; backends: string[]; tokenFile: string },
): PrometheusConfig {
  const jobs = new Map(deployed.scrape_configs.map((job) => [job.job_name, job]));
  const router = jobs.get("switchyard-router");
  const backend = jobs.get("switchyard-backend");
  assert.ok(router && backend, "deploy/prometheus/prometheus.yml has both jobs");
  assert.equal(backend.authorization?.type, "Bearer");
  assert.ok(backend.authorization.credentials_file, "backends are scraped with a token file");
  return {
    global: {
      ...deployed.global,
      scrape_interval: "1s",
      scrape_timeout: "1s",
      evaluation_interval: "1s",
    },
    rule_files: (deployed.rule_files ?? []).map((file) => new URL(file, DEPLOYED).pathname),
    scrape_configs: [
      { ...router, static_configs: [{ targets: [targets.router] }] },
      {
        ...backend,
        authorization: { ...backend.authorization, credentials_file: targets.tokenFile },
        static_configs: [{ targets: targets.backends }],
      },
    ],
  };
}

interface QueryResult {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(base: string, promql: string): Promise<QueryResult[]> {
  const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = await response.json();
  assert.equal(body.status, "success", JSON.stringify(body));
  return body.data.result;
}

/**
 * Queries `promql` until `done(results)` holds (errors: Prometheus not listening yet) and
 * returns those results; throws after 30 s, naming `what` and the last results.
 */
async function queryUntil(
  base: string,
  promql: string,
  done: (results: QueryResult[]) => boolean,
  what: string,
): Promise<QueryResult[]> {
  let last: QueryResult[] = [];
  await waitFor(what, async () => done(last = await query(base, promql)), {
    timeoutMs: 30_000,
    detail: () => JSON.stringify(last),
  });
  return last;
}

const available = await commandAvailable("prometheus");

Deno.test({
  name: "Prometheus with deploy/prometheus/prometheus.yml scrapes router and backends",
  // Without the prometheus binary: fail in CI, skip elsewhere.
  ignore: !available && Deno.env.get("CI") === undefined,
  async fn() {
    assert.ok(available, "prometheus is missing: apt-get install -y prometheus");
    const modelDir = await makeTinyModel();
    const work = await Deno.makeTempDir({ prefix: "switchyard-prometheus-" });
    const pool = await startPool({ modelDir, backends: 2 });
    let prometheus: Deno.ChildProcess | undefined;
    try {
      // Step 1: a little traffic, so expert counters are non-zero.
      for (let i = 0; i < 3; i++) {
        const tokens = Float32Array.from({ length: 2 * TINY.dModel }, (_, j) => Math.cos(i * j));
        assert.equal((await infer(pool.router.url, TINY.name, tokens, TINY.dModel)).status, 200);
      }
      // Step 2: the deployed config, pointed at the test pool.
      const tokenFile = join(work, "internal_token");
      await Deno.writeTextFile(tokenFile, pool.token, { mode: 0o600 });
      const hostPort = (url: string) => new URL(url).host;
      const config = testConfig(parse(await Deno.readTextFile(DEPLOYED)), {
        router: hostPort(pool.router.url),
        backends: pool.backends.map((b) => hostPort(b.url)),
        tokenFile,
      });
      const configFile = join(work, "prometheus.yml");
      await Deno.writeTextFile(configFile, stringify(config));
      // Step 3: a real Prometheus.
      const port = freePort();
      const base = `http://127.0.0.1:${port}`;
      prometheus = new Deno.Command("prometheus", {
        args: [
          `--config.file=${configFile}`,
          `--storage.tsdb.path=${join(work, "tsdb")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      // Step 4: every target scraped and up — the backends took the token from the file.
      const up = await queryUntil(
        base,
        "up",
        (r) => r.length === 3 && r.every((s) => s.value[1] === "1"),
        "every target up",
      );
      assert.deepEqual(
        up.map((s) => [s.metric["job"], s.value[1]]).sort(),
        [["switchyard-backend", "1"], ["switchyard-backend", "1"], ["switchyard-router", "1"]],
        JSON.stringify(up),
      );
      // Step 5: Switchyard series come back.
      const info = await query(base, "switchyard_build_info");
      assert.deepEqual(info.map((s) => s.metric["job"]).sort(), [
        "switchyard-backend",
        "switchyard-backend",
        "switchyard-router",
      ]);
      assert.ok(info.every((s) => s.value[1] === "1" && s.metric["version"]));
      const tokens = await query(base, "sum(switchyard_expert_tokens_total)");
      assert.equal(Number(tokens[0]?.value[1]), 3 * 2 * TINY.topK * TINY.layers);
      const requests = await query(
        base,
        `sum(switchyard_router_requests_total{model="${TINY.name}",code="200"})`,
      );
      assert.equal(Number(requests[0]?.value[1]), 3);

      // Step 6: with traffic flowing, every dashboard query returns data.
      assert.deepEqual(config.rule_files, [RULES.pathname], "prometheus.yml loads the rules");
      let sending = true;
      const traffic = (async () => {
        for (let i = 0; sending; i++) {
          const tokens = Float32Array.from({ length: TINY.dModel }, (_, j) => Math.sin(i + j));
          await infer(pool.router.url, TINY.name, tokens, TINY.dModel);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      try {
        const queries = await dashboardQueries();
        assert.ok(queries.length >= 10, `${queries.length} dashboard queries`);
        for (const [title, expr] of queries) {
          const promql = expr.replaceAll("$model", ".*").replaceAll("$topn", "20");
          const result = await queryUntil(
            base,
            promql,
            (r) => r.length > 0,
            `panel "${title}": ${promql} to return data`,
          );
          assert.ok(result.length > 0, `panel "${title}": ${promql} returned no data`);
        }
      } finally {
        sending = false;
        await traffic;
      }
    } finally {
      if (prometheus) {
        try {
          prometheus.kill("SIGTERM");
        } catch { /* already gone */ }
        await prometheus.status;
      }
      await pool.close();
      await Deno.remove(work, { recursive: true });
      await Deno.remove(modelDir, { recursive: true });
    }
  },
});
