import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function sim(...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tools/sim/main.ts", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("deno task sim: the same seed and options print the same report", async () => {
  // EPLB's greedy planner keeps this CLI-level check cheap (the Switchyard policies re-plan
  // hundreds of times in a smoke day: minutes on a busy machine); the engine's own
  // determinism test covers them (engine_test.ts).
  const args = ["--smoke", "--scenario", "event", "--policy", "eplb", "--seed", "3"];
  const first = await sim(...args);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /\| 256x32 \| event \| ample \| eplb \|/);
  assert.match(first.stdout, /\| published \|/);
  assert.doesNotMatch(first.stdout, /calibrat/i);
  const second = await sim(...args);
  assert.equal(second.stdout, first.stdout);
});

Deno.test("deno task sim: a bad option value exits 2 naming it", async () => {
  const result = await sim("--scenario", "nope", "--smoke");
  assert.equal(result.code, 2);
  assert.match(result.stderr, /unknown scenario "nope"/);
});
