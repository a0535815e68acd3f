/**
 * @module The lines every results file starts with: the command, the commit (and
 * whether the tree had uncommitted changes), the date, the machine (CPU model, cores)
 * and, when the benchmark measured one, the compute limit of this run.
 */

/** What the header says beyond what it reads itself. */
export interface ResultsHeaderOptions {
  /** The command that produced the file, as typed. */
  command: string;
  /** The compute limit measured in the same run, in words (e.g. "12,478 tokens/s per core"). */
  limit?: string;
  /** Other facts of the run, one line each. */
  notes?: readonly string[];
}

/** Markdown lines (`- key: value`) for the top of a results file. */
export async function resultsHeader(options: ResultsHeaderOptions): Promise<string[]> {
  return [
    `Command: \`${options.command}\``,
    "",
    `- commit: ${await gitCommit()}`,
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpuModel()}, ${navigator.hardwareConcurrency} cores`,
    ...(options.limit ? [`- compute limit (measured in this run): ${options.limit}`] : []),
    ...(options.notes ?? []).map((note) => `- ${note}`),
  ];
}

/** The CPU model from `/proc/cpuinfo`, or "unknown CPU". */
export function cpuModel(): string {
  try {
    return /model name\s*:\s*(.+)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1]?.trim() ??
      "unknown CPU";
  } catch {
    return "unknown CPU";
  }
}

async function gitCommit(): Promise<string> {
  const run = async (args: string[]) => {
    try {
      const out = await new Deno.Command("git", { args, stdout: "piped", stderr: "null" })
        .output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
    } catch {
      return null;
    }
  };
  const commit = await run(["rev-parse", "--short", "HEAD"]);
  if (commit === null) return "unknown (not a git checkout)";
  const dirty = await run(["status", "--porcelain", "--untracked-files=no"]);
  return dirty ? `${commit} with uncommitted changes` : commit;
}
