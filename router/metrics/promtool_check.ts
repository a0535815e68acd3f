/**
 * @module Runs `promtool check metrics` (Debian's `prometheus` package) on exposition
 * text, for tests: exit code and lint output. `promtoolAvailable()` says whether the
 * binary is on PATH; tests must fail without it when `CI` is set (see docs/METRICS.md).
 */

/** What `promtool check metrics` said. */
export interface PromtoolResult {
  code: number;
  /** stdout and stderr together, trimmed: lint problems, one per line. */
  output: string;
}

/** Whether `promtool` can be run. */
export async function promtoolAvailable(): Promise<boolean> {
  try {
    const { code } = await new Deno.Command("promtool", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
    return code === 0;
  } catch {
    return false;
  }
}

/** Pipes `text` into `promtool check metrics`. */
export async function promtoolCheckMetrics(text: string): Promise<PromtoolResult> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code, output: (decode(stdout) + decode(stderr)).trim() };
}
