/**
 * Every task in deno.json answers `--help` with its usage and exits 0 without doing its
 * work. The list comes from deno.json, so a new task enrols itself. Tasks whose last
 * command is a Deno built-in (`deno test …`) pass `--help` to Deno and are skipped.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

/** deno.json's tasks whose final command runs one of our scripts. */
async function scriptTasks(): Promise<{ runs: string[]; builtIns: string[] }> {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as {
    tasks: Record<string, string>;
  };
  const runs: string[] = [];
  const builtIns: string[] = [];
  for (const [name, command] of Object.entries(tasks)) {
    const last = command.split("&&").at(-1)!.trim();
    (/^deno run\b/.test(last) ? runs : builtIns).push(name);
  }
  return { runs, builtIns };
}

async function help(task: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", task, "--help"],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("every task answers --help with its usage and options", async () => {
  const { runs, builtIns } = await scriptTasks();
  assert.ok(runs.length >= 15, `found ${runs}`);
  assert.deepEqual(
    builtIns.sort(),
    ["test", "test:unit"],
    "only deno test is skipped",
  );
  const queue = [...runs];
  const failures: string[] = [];
  // Two at a time: each is a short Deno start-up.
  await Promise.all([0, 1].map(async () => {
    for (let task = queue.shift(); task !== undefined; task = queue.shift()) {
      const { code, stdout, stderr } = await help(task);
      const usage = new RegExp(`^Usage: deno task ${task.replace(/[:]/g, "\\:")}\\b`);
      if (code !== 0 || !usage.test(stdout) || !/-h, --help/.test(stdout)) {
        failures.push(`${task}: exit ${code}\n${stdout}${stderr}`);
      } else if (!/Options:/.test(stdout)) {
        failures.push(`${task}: no option list\n${stdout}`);
      }
    }
  }));
  assert.deepEqual(failures, []);
});
