/**
 * @module CPU time of processes from `/proc/<pid>/stat` (Linux): user + system time of
 * all threads, in milliseconds. Benchmarks diff two readings of the serving processes,
 * so the load generator's own CPU never counts.
 */

/** Clock ticks per second of `/proc` times (Linux `USER_HZ`: 100 on every mainstream build; assumed). */
const USER_HZ = 100;

/** CPU milliseconds (user + system, all threads) of process `pid` so far (`"self"`: this one). */
export function processCpuMs(pid: number | "self"): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // The command name may hold spaces and parentheses: fields start after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of stat(5) (utime, stime) are 12 and 13 after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / USER_HZ;
}

/** Summed CPU milliseconds of several processes. */
export function cpuMsOf(pids: readonly (number | "self")[]): number {
  return pids.reduce((sum: number, pid) => sum + processCpuMs(pid), 0);
}
