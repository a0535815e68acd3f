/**
 * A bad configuration stops each entry point at once with a message naming the field.
 */
import assert from "node:assert/strict";

async function run(script: string, env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script],
    cwd: new URL("../", import.meta.url).pathname,
    env,
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);
  return { code: output.code, text };
}

Deno.test("router, backend and launcher refuse a bad config naming the field", async () => {
  const router = await run("router/main.ts", { SWITCHYARD_ROUTER__PORT: "eighty" });
  assert.equal(router.code, 1);
  assert.match(router.text, /Invalid config: router\.port/);

  const backend = await run("gpu-backend/main.ts", { SWITCHYARD_BATCHING__MAX: "0" });
  assert.equal(backend.code, 1);
  assert.match(backend.text, /Invalid config: batching\.max/);

  const launcher = await run("tools/start.ts", { SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "2" });
  assert.equal(launcher.code, 1);
  assert.match(launcher.text, /Invalid config: expert_balancer\.threshold/);

  const missingFile = await run("router/main.ts", {
    SWITCHYARD_CONFIG: "/nonexistent/switchyard.yaml",
  });
  assert.equal(missingFile.code, 1);
  assert.match(missingFile.text, /Cannot read config file "\/nonexistent\/switchyard\.yaml"/);
});

Deno.test("a backend pointed at a missing model exits naming the file", async () => {
  const backend = await run("gpu-backend/main.ts", {
    SWITCHYARD_MODEL__DIR: "/nonexistent-model",
    SWITCHYARD_BACKEND__PORT: "0",
  });
  assert.equal(backend.code, 1);
  assert.match(backend.text, /Cannot load model: cannot read \\"\/nonexistent-model\/moe\.json/);
});

Deno.test("the launcher refuses a configured model.dir without moe.json, naming the path and the fix", async () => {
  const parent = await Deno.makeTempDir({ prefix: "switchyard-typo-" });
  const dir = `${parent}/modles/mine`; // a typo: nothing there
  try {
    const launcher = await run("tools/start.ts", { SWITCHYARD_MODEL__DIR: dir });
    assert.equal(launcher.code, 1);
    assert.ok(
      launcher.text.includes(
        `Cannot start: no model at "${dir}/moe.json" (model.dir "${dir}" from SWITCHYARD_MODEL__DIR)`,
      ),
      launcher.text,
    );
    assert.match(launcher.text, /Point model\.dir \(or SWITCHYARD_MODEL__DIR\) at a directory/);
    assert.match(launcher.text, /or pass --demo to generate the demo model there/);
    assert.equal(await Deno.stat(dir).then(() => true, () => false), false, "nothing generated");
  } finally {
    await Deno.remove(parent, { recursive: true });
  }
});
