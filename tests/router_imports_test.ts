/**
 * The router must run on an edge runtime without native addons: its module graph
 * (from `deno info --json router/main.ts`) may not reach onnxruntime or gpu-backend/,
 * not even through an npm package's dependencies.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const GPU_BACKEND = new URL("gpu-backend/", ROOT).href;

/** The parts of `deno info --json` output this test reads. */
interface ModuleGraph {
  modules: Array<{ specifier: string; npmPackage?: string; error?: string }>;
  npmPackages?: Record<string, { dependencies?: string[] }>;
}

/** Every module specifier in the graph plus `npm:<id>` for each npm package it reaches. */
function reachable(graph: ModuleGraph): string[] {
  const specifiers = graph.modules.map((module) => module.specifier);
  const queue = graph.modules.flatMap((module) => module.npmPackage ? [module.npmPackage] : []);
  const seen = new Set<string>();
  while (queue.length > 0) {
    const id = queue.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...(graph.npmPackages?.[id]?.dependencies ?? []));
  }
  return [...specifiers, ...[...seen].map((id) => `npm:${id}`)];
}

/** Specifiers the router may not reach. */
function forbidden(graph: ModuleGraph): string[] {
  return reachable(graph).filter((specifier) =>
    specifier.toLowerCase().includes("onnxruntime") || specifier.startsWith(GPU_BACKEND)
  );
}

async function moduleGraph(entry: string): Promise<ModuleGraph> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, `deno info ${entry} failed: ${stderr}`);
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

Deno.test("router/main.ts reaches neither onnxruntime nor gpu-backend/", async () => {
  const graph = await moduleGraph("router/main.ts");
  const broken = graph.modules.filter((module) => module.error !== undefined);
  assert.deepEqual(broken, [], "every module in the router graph resolves");
  const specifiers = reachable(graph);
  // The graph is real, not empty: it holds the router, shared/ and hono.
  assert.ok(
    specifiers.some((s) => s.endsWith("/router/serve/app.ts")),
    "router/serve/app.ts in graph",
  );
  assert.ok(specifiers.some((s) => s.endsWith("/shared/config.ts")), "shared/config.ts in graph");
  assert.ok(specifiers.some((s) => s.startsWith("npm:") && s.includes("hono@")), "hono in graph");
  assert.deepEqual(forbidden(graph), []);
});

Deno.test("router/edge.ts (Deno Deploy) reaches neither onnxruntime, gpu-backend/ nor tools/", async () => {
  const graph = await moduleGraph("router/edge.ts");
  assert.deepEqual(graph.modules.filter((module) => module.error !== undefined), []);
  const specifiers = reachable(graph);
  assert.ok(specifiers.some((s) => s.endsWith("/router/operate/dashboard/assets_bundle.ts")));
  assert.deepEqual(forbidden(graph), []);
  assert.deepEqual(specifiers.filter((s) => s.includes("/tools/") || s.includes("/tests/")), []);
});

Deno.test("the import check catches onnxruntime directly, via npm dependencies, and gpu-backend/", () => {
  const graph: ModuleGraph = {
    modules: [
      { specifier: new URL("router/serve/app.ts", ROOT).href },
      { specifier: new URL("gpu-backend/server/app.ts", ROOT).href },
      { specifier: "npm:/onnxruntime-node@1.30.0", npmPackage: "onnxruntime-node@1.30.0" },
      { specifier: "npm:/some-wrapper@1.0.0", npmPackage: "some-wrapper@1.0.0" },
    ],
    npmPackages: {
      "some-wrapper@1.0.0": { dependencies: ["onnxruntime-common@1.30.0"] },
      "onnxruntime-node@1.30.0": { dependencies: [] },
    },
  };
  assert.deepEqual(forbidden(graph).sort(), [
    new URL("gpu-backend/server/app.ts", ROOT).href,
    "npm:/onnxruntime-node@1.30.0",
    "npm:onnxruntime-common@1.30.0",
    "npm:onnxruntime-node@1.30.0",
  ]);
});

const backendMain = new URL("gpu-backend/main.ts", ROOT);
const hasBackendMain = await Deno.stat(backendMain).then(() => true, () => false);

Deno.test({
  name: "the import check flags the backend's own graph",
  ignore: !hasBackendMain,
  fn: async () => {
    const graph = await moduleGraph("gpu-backend/main.ts");
    assert.ok(forbidden(graph).length > 0);
  },
});
