/**
 * @module The `bench:faults` report: the run's figures as JSON and as a markdown table
 * (fault × load × failures × recovery × RSS) with each target of issue 12 judged from
 * them (pure).
 */
import type { CapacityRun } from "./capacity.ts";
import type { KillResult, LoadLevel, StopResult } from "./faults_phases.ts";

/** Everything one run measured. */
export interface FaultsRun {
  command: string;
  started: string;
  model: string;
  machine: string;
  capacity_rps: number;
  capacity_clients: number;
  /** Every closed-loop run the capacity is the best of (absent in older runs: one run). */
  capacity_runs?: CapacityRun[];
  idle_router_rss_mib: number;
  levels: LoadLevel[];
  kill: KillResult;
  stop: StopResult;
  try_timeout_s: number;
  launcher_restarts: number;
}

const yes = (ok: boolean) => ok ? "met" : "**not met**";
const statuses = (counts: Record<string, number>) =>
  Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}: ${v}`)
    .join(", ");
const s = (value: number | null) => value === null ? "not seen" : `${value} s`;

/** The markdown report. */
export function faultsMarkdown(run: FaultsRun): string {
  const three = run.levels.find((level) => level.factor === 3);
  const five = run.levels.find((level) => level.factor === 5);
  const noHealthy = run.levels.reduce((sum, level) => sum + level.no_healthy_backend, 0);
  const withoutRetryAfter = run.levels.reduce((sum, l) => sum + l.shed_without_retry_after, 0);
  const other = run.levels.reduce(
    (sum, level) =>
      sum + Object.entries(level.statuses)
        .filter(([status]) => !["200", "429", "503"].includes(status))
        .reduce((n, [, count]) => n + count, 0),
    0,
  );
  const stopBudget = Math.ceil(run.stop.rate_rps * run.try_timeout_s);
  const lines = [
    "# Faults and overload against the real stack (`bench:faults`)",
    "",
    `Command: \`${run.command}\``,
    "",
    `- started ${run.started}; \`deno task start\` (supervised launcher, 2 backends, README defaults,`,
    "  state in memory, no log files) on loopback; pids from its `--status-file`",
    `- model: ${run.model}; ${run.machine}`,
    run.capacity_runs
      ? `- capacity: ${run.capacity_rps} req/s, the best goodput through the router over closed-loop runs at ${
        run.capacity_runs.map((r) => `${r.concurrency} clients (${r.goodput_rps})`).join(", ")
      } req/s, best at ${run.capacity_clients}`
      : `- capacity: ${run.capacity_rps} req/s, measured through the router with ${run.capacity_clients} closed-loop clients`,
    `- router RSS idle (after warm-up): ${run.idle_router_rss_mib} MiB`,
    "- offered load: Poisson arrivals at the factor × capacity, one load generator on the same machine",
    "  (the `sent` column says what it managed to send)",
    "- read with care: the machine is shared with other work (load generator, router and backends on",
    "  the same cores), so a level's goodput also depends on how much CPU the generator itself takes",
    "",
    "## Offered load",
    "",
    "| load | offered req/s | sent req/s | goodput req/s | goodput / capacity | answers | no healthy backend | shed w/o Retry-After | p50 / p99 ms | router RSS max MiB (× idle) | router JS heap MiB | router open fds max | ejections |",
    "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...run.levels.map((l) =>
      `| ${l.factor}× | ${l.offered_rps} | ${l.sent_rps} | ${l.goodput_rps} | ${l.goodput_over_capacity} | ${
        statuses(l.statuses)
      } | ${l.no_healthy_backend} | ${l.shed_without_retry_after} | ${l.p50_ms} / ${l.p99_ms} | ${l.router_rss_max_mib} (${l.router_rss_over_idle}×) | ${
        l.router_heap_used_mib ?? "—"
      } | ${l.router_open_fds_max ?? "—"} | ${l.ejections} |`
    ),
    "",
    "## Faults",
    "",
    "| fault | load | requests | failures | answers | recovery |",
    "| --- | --- | ---: | ---: | --- | --- |",
    `| kill -9 backend-1 | ${run.kill.rate_rps} req/s | ${run.kill.requests} | ${run.kill.failures} | ${
      statuses(run.kill.statuses)
    } | ejected ${s(run.kill.ejected_s)}, restarted ${s(run.kill.restarted_s)}, ready ${
      s(run.kill.backend_ready_s)
    }, in rotation ${s(run.kill.in_rotation_s)} (ready → rotation ${
      s(run.kill.ready_to_rotation_s)
    }); ${run.kill.retries} retries |`,
    `| SIGSTOP backend-2 ${run.stop.stopped_s} s | ${run.stop.rate_rps} req/s | ${run.stop.requests} | ${run.stop.failures} | ${
      statuses(run.stop.statuses)
    } | ejected ${s(run.stop.ejected_s)} after SIGSTOP, back ${
      s(run.stop.back_in_rotation_after_cont_s)
    } after SIGCONT; retries: ${run.stop.retries_timeout} timeout, ${run.stop.retries_ejected} ejected, ${run.stop.retries_unreachable} unreachable, ${run.stop.retries_refused} refused by the budget; p99 ${run.stop.p99_ms} ms |`,
    "",
    "## Targets (issue 12)",
    "",
    "| target | measured | verdict |",
    "| --- | --- | --- |",
    `| kill -9 under 40 req/s: 0 client-visible failures | ${run.kill.failures} | ${
      yes(run.kill.failures === 0)
    } |`,
    `| … back in rotation within model load time + 2 s | ready → rotation ${
      s(run.kill.ready_to_rotation_s)
    } | ${yes(run.kill.ready_to_rotation_s !== null && run.kill.ready_to_rotation_s <= 2)} |`,
    `| SIGSTOP: 0 failures beyond one per-try timeout's worth (${run.try_timeout_s} s × ${run.stop.rate_rps} req/s = ${stopBudget}) | ${run.stop.failures} non-200 (${
      statuses(run.stop.statuses)
    }), ${run.stop.timeouts_504} × 504 | ${
      run.stop.failures === 0
        ? "met"
        : run.stop.failures <= stopBudget
        ? "met by the letter (429/503 answers, no 504: shed while one backend carried the load)"
        : "**not met**"
    } |`,
    `| goodput at 3× ≥ 90 % of capacity | ${three?.goodput_over_capacity ?? "not run"} | ${
      yes((three?.goodput_over_capacity ?? 0) >= 0.9)
    } |`,
    `| 0 "no healthy backend" answers while backends are alive | ${noHealthy} | ${
      yes(noHealthy === 0)
    } |`,
    `| every shed answer 429/503 with Retry-After | ${withoutRetryAfter} without, ${other} other non-200 | ${
      yes(withoutRetryAfter === 0 && other === 0)
    } |`,
    `| router RSS at 5× ≤ 2× idle | ${five?.router_rss_over_idle ?? "not run"}× | ${
      yes((five?.router_rss_over_idle ?? Infinity) <= 2)
    } |`,
    "",
    `The launcher restarted ${run.launcher_restarts} child process(es) during the run (the killed backend).`,
    "",
    "RSS: the router's JavaScript heap stays at tens of MiB while its RSS grows under overload and",
    "then stays flat from level to level — bounded, but native memory (connections, buffers, the",
    "allocator) above the 2× target; not solved in this change.",
    "",
  ];
  return lines.join("\n");
}
