/**
 * The reference forward pass is the oracle of the backend's routing: its module graph
 * (`deno info --json`) must not reach the backend's routing code, or a routing bug would
 * be in both and no end-to-end comparison could show it.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const BACKEND_MOE = new URL("gpu-backend/moe/", ROOT).href;

async function moduleSpecifiers(entry: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    modules: { specifier: string }[];
  };
  return graph.modules.map((module) => module.specifier);
}

Deno.test("the reference forward pass does not import the backend's routing", async () => {
  const specifiers = await moduleSpecifiers("tools/model/reference.ts");
  assert(specifiers.some((s) => s.endsWith("tools/model/reference_routing.ts")));
  const backend = specifiers.filter((s) => s.startsWith(BACKEND_MOE));
  assert.deepEqual(backend, [], `reference.ts reaches ${backend.join(", ")}`);
});
