/**
 * The before/after benchmark in smoke mode (seconds-long phases, tiny model): it runs
 * both baselines and the default configuration on real processes and writes well-formed `throughput.csv`,
 * `latency.csv` and `summary.md`. Speed is the benchmark's business, not this test's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTinyModel } from "./_support/tiny_model.ts";

Deno.test("deno task bench --smoke writes throughput.csv, latency.csv and summary.md", async () => {
  const modelDir = await makeTinyModel();
  const out = await Deno.makeTempDir({ prefix: "switchyard-bench-" });
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "tools/bench/before_after.ts",
        "--smoke",
        "--model",
        modelDir,
        "--out",
        out,
        "--concurrency",
        "4",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assert.equal(run.code, 0, stderr);

    for (
      const [file, header] of [
        ["throughput.csv", "config,phase,t_s,requests_s,tokens_s"],
        ["latency.csv", "config,phase,t_s,p50_ms,p99_ms"],
      ] as const
    ) {
      const lines = (await Deno.readTextFile(join(out, file))).trimEnd().split("\n");
      assert.equal(lines[0], header);
      const rows = lines.slice(1).map((line) => line.split(","));
      assert.ok(rows.length >= 4, `${file} has too few rows`);
      for (const row of rows) {
        assert.equal(row.length, 5, `${file}: ${row.join(",")}`);
        assert.ok(["no-plan", "static", "switchyard"].includes(row[0]!));
        assert.ok(["saturation", "schedule"].includes(row[1]!));
        for (const cell of row.slice(2)) assert.ok(cell === "" || Number.isFinite(Number(cell)));
      }
      // Every configuration (two baselines, the defaults) and both phases are there.
      assert.deepEqual(new Set(rows.map((r) => `${r[0]}/${r[1]}`)).size, 6);
    }
    const summary = await Deno.readTextFile(join(out, "summary.md"));
    assert.match(
      summary,
      /\| throughput at saturation \(tokens\/s\) \| \d+ \| \d+ \| \d+ \| [\d.]+× \| [\d.]+× \|/,
    );
    assert.match(summary, /switchyard: the DEFAULT configuration/);
    assert.match(summary, /command: `deno task bench /);
    assert.match(summary, /\| p99 latency under the schedule \(ms\) \|/);
    assert.match(summary, /real onnxruntime CPU executors/);
  } finally {
    await Deno.remove(out, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});
