/**
 * The before/after benchmark in smoke mode (second-long phases, one seed, the tiny model
 * for both the budget pool and the demo check): every configuration runs on real
 * processes — the simulated executor with its device time measured in the run — and the
 * three files come out well formed, each starting with the command, commit, date and
 * machine. Speed is the benchmark's business, not this test's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTinyModel } from "./_support/tiny_model.ts";

const CONFIGS = ["static", "eplb-10min", "switchyard", "replicate-all"];

Deno.test("deno task bench --smoke writes throughput.csv, latency.csv and summary.md", async () => {
  const modelDir = await makeTinyModel();
  const out = await Deno.makeTempDir({ prefix: "switchyard-bench-" });
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "tools/bench/before_after/main.ts",
        "--smoke",
        "--executors",
        "simulated",
        "--model",
        modelDir,
        "--demo-model",
        modelDir,
        "--demo-configs",
        "replicate-all,switchyard",
        "--out",
        out,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assert.equal(run.code, 0, stderr);

    for (
      const [file, columns] of [
        ["throughput.csv", "requests_s,tokens_s,good_s"],
        ["latency.csv", "p50_ms,p90_ms,p99_ms,mean_ms"],
      ] as const
    ) {
      const lines = (await Deno.readTextFile(join(out, file))).trimEnd().split("\n");
      assert.match(lines[0]!, /^# Command: `deno task bench --smoke /);
      assert.ok(
        lines.some((l) => /^# commit: /.test(l)) && lines.some((l) => /^# machine: /.test(l)),
      );
      const data = lines.filter((l) => !l.startsWith("#"));
      assert.equal(data[0], `executor,model,config,seed,phase,t_s,${columns}`);
      const rows = data.slice(1).map((line) => line.split(","));
      const width = data[0]!.split(",").length;
      for (const row of rows) {
        assert.equal(row.length, width, `${file}: ${row.join(",")}`);
        assert.ok(["simulated", "onnx"].includes(row[0]!));
        assert.ok(CONFIGS.includes(row[2]!), row[2]);
        assert.match(row[4]!, /^(idle|saturation|rate-[\d.]+|shift)$/);
        for (const cell of row.slice(5)) assert.ok(cell === "" || Number.isFinite(Number(cell)));
      }
      // The budget pool ran every phase of its three configurations; the demo check two.
      const phases = new Set(rows.map((r) => `${r[0]}/${r[2]}/${r[4]}`));
      for (const config of ["static", "eplb-10min", "switchyard"]) {
        for (const phase of ["idle", "saturation", "rate-0.5", "rate-0.9", "shift"]) {
          assert.ok(phases.has(`simulated/${config}/${phase}`), `${config}/${phase}`);
        }
      }
      assert.ok(phases.has("onnx/replicate-all/saturation"));
    }
    const summary = await Deno.readTextFile(join(out, "summary.md"));
    assert.match(summary, /^# Switchyard before\/after/);
    assert.match(summary, /Command: `deno task bench --smoke /);
    assert.match(summary, /- machine: .+, \d+ cores/);
    assert.match(summary, /- compute limit \(measured in this run\): /);
    assert.match(
      summary,
      /device time per layer execution [\d.]+ ms \+ [\d.]+ ms per routed expert given rows \+ [\d.]+ ms per expert row \(MEASURED in this run/,
    );
    assert.match(
      summary,
      /\| saturation throughput \(tokens\/s\), switchyard ÷ static \| simulated \| ≥ 1\.4× \| [\d.]+× \| \*\*(met|not met)\*\* \(\d\/1 seeds\) \|/,
    );
    assert.match(summary, /\| demo model, ample memory: .+ \| onnx, demo model \| ≥ 0\.95× \|/);
    assert.match(summary, /### The seed's five metrics, before and after/);
    assert.match(summary, /SLO: \d+ ms per request \(assumed: 10 × the static baseline's idle p50/);
    assert.match(summary, /eplb-10min re-plans every [\d.]+ s/);
  } finally {
    await Deno.remove(out, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});
