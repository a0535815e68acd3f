/**
 * @module CPU pinning for benchmarks that share one machine between the load generator and
 * the serving processes: `taskset` (util-linux) sets the CPUs every thread of a process may
 * run on; threads and child processes started later inherit them.
 */

/** Pins every thread of `pid` to `cpus` (a `taskset` list such as `0` or `1-3`). */
export async function pinTo(pid: number, cpus: string): Promise<void> {
  const out = await new Deno.Command("taskset", { args: ["-a", "-c", "-p", cpus, String(pid)] })
    .output();
  if (!out.success) {
    throw new Error(
      `Cannot pin process ${pid} to CPUs ${cpus}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
}

/** CPU 0 and the rest (`1-<n-1>`) of this machine; throws with one CPU. */
export function splitCpus(): { first: string; rest: string } {
  const cpus = navigator.hardwareConcurrency;
  if (cpus < 2) throw new RangeError("Cannot pin: this machine has one CPU");
  return { first: "0", rest: cpus === 2 ? "1" : `1-${cpus - 1}` };
}
