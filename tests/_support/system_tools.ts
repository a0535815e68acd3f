/**
 * @module Test support: system tools the tests use (Debian's `prometheus` package gives
 * `promtool` and `prometheus`). `commandAvailable()` says whether a binary runs; tests
 * must fail without it when `CI` is set (see docs/METRICS.md), and may skip otherwise.
 * `promtoolCheckMetrics()` pipes exposition text into `promtool check metrics`.
 */

/** What `promtool check metrics` said. */
export interface PromtoolResult {
  code: number;
  /** stdout and stderr together, trimmed: lint problems, one per line. */
  output: string;
}

/** Whether `name --version` runs and exits 0. */
export async function commandAvailable(name: string): Promise<boolean> {
  try {
    const { code } = await new Deno.Command(name, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output();
    return code === 0;
  } catch {
    return false;
  }
}

/** Whether `promtool` can be run. */
export function promtoolAvailable(): Promise<boolean> {
  return commandAvailable("promtool");
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
