import assert from "node:assert/strict";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import { type CommandOutput, NvidiaSmiSampler } from "./nvidia_smi.ts";

/** A runner answering from a script; counts calls and records the arguments. */
function scripted(...answers: (CommandOutput | Error)[]) {
  const calls: string[][] = [];
  const run = (args: readonly string[]) => {
    calls.push([...args]);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
  return { run, calls };
}

Deno.test("NvidiaSmiSampler keeps the latest reading of its own device", async () => {
  const runner = scripted({ success: true, stdout: "GPU-5e3c0a1b, 40, 1024, 2048, 55.5\n" });
  const sampler = new NvidiaSmiSampler({
    logger: new MemoryLogger(),
    run: runner.run,
    device: "2",
  });
  assert.equal(sampler.available && sampler.reading, null, "nothing before the first run");
  await sampler.sampleNow();
  assert.equal(sampler.reading?.utilisation, 0.4);
  assert.equal(sampler.reading?.powerW, 55.5);
  assert.deepEqual(sampler.reading?.deviceIds, ["GPU-5e3c0a1b"]);
  assert.deepEqual(runner.calls[0], [
    "-i",
    "2",
    "--query-gpu=uuid,utilization.gpu,memory.used,memory.total,power.draw",
    "--format=csv,noheader,nounits",
  ]);
});

Deno.test("NvidiaSmiSampler: a missing binary ends sampling and leaves the reading null", async () => {
  const logger = new MemoryLogger();
  const runner = scripted(new Deno.errors.NotFound("nvidia-smi"));
  const sampler = new NvidiaSmiSampler({ logger, run: runner.run, intervalMs: 1 });
  await sampler.start();
  await sampler.sampleNow();
  assert.equal(sampler.available, false);
  assert.equal(sampler.reading, null);
  assert.equal(runner.calls.length, 1, "never tried again");
  assert.equal(logger.find("accelerator readings unavailable: nvidia-smi not found").length, 1);
  await sampler.stop();
});

Deno.test("NvidiaSmiSampler drops an old reading when a run fails, logging each change once", async () => {
  const logger = new MemoryLogger();
  const runner = scripted(
    { success: true, stdout: "GPU-a, 10, 1, 2, 3" },
    { success: false, stdout: "" },
    new Error("timed out"),
    { success: true, stdout: "garbage" },
    { success: true, stdout: "GPU-a, 20, 1, 2, 3" },
  );
  const sampler = new NvidiaSmiSampler({ logger, run: runner.run });
  await sampler.sampleNow();
  assert.equal(sampler.reading?.utilisation, 0.1);
  for (let i = 0; i < 3; i++) {
    await sampler.sampleNow();
    assert.equal(sampler.reading?.devices ?? null, null, `run ${i + 2} failed: no number`);
  }
  assert.equal(sampler.available, true, "a failing tool is retried");
  await sampler.sampleNow();
  assert.equal(sampler.reading?.utilisation, 0.2);
  assert.equal(logger.find("accelerator readings unavailable: nvidia-smi failed").length, 1);
  assert.equal(logger.find("accelerator readings available again").length, 1);
});

Deno.test("NvidiaSmiSampler.start() samples again every interval until stop()", async () => {
  const runner = scripted({ success: true, stdout: "GPU-a, 10, 1, 2, 3" });
  const sampler = new NvidiaSmiSampler({
    logger: new MemoryLogger(),
    run: runner.run,
    intervalMs: 5,
  });
  await sampler.start();
  while (runner.calls.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
  await sampler.stop();
  const calls = runner.calls.length;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(runner.calls.length, calls, "no run after stop()");
});
