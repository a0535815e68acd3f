/**
 * The house rules, checked from the module graph (`deno info --json`):
 *
 * 1. The router must run on an edge runtime without native addons: its graph (from
 *    `router/main.ts` and `router/edge.ts`) may not reach onnxruntime or gpu-backend/, not
 *    even through an npm package's dependencies.
 * 2. Who may import whom, over every production file (router/, gpu-backend/ and shared/,
 *    `*_test.ts` aside) and tools/: router/'s folders stand in layers — runtime/, serve/,
 *    control/, operate/, wire/, then the entry points `main.ts` and `edge.ts` — and a file
 *    imports its own layer or lower ones only (serve/ never imports control/ or operate/;
 *    control/ never imports operate/); no production file imports tools/, tests/ or test
 *    support, and tools/ never imports tests/; shared/ imports only shared/; router/ and
 *    gpu-backend/ never import each other; production folders import each other in no loop.
 *
 * Each failure names every offending import, file → file.
 */
import assert from "node:assert/strict";
import {
  backwardImports,
  crossImports,
  folderLoops,
  type Import,
  layerViolations,
  listed,
  sharedViolations,
  sourceImports,
} from "./_support/import_rules.ts";

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

/** router/'s layers, lowest first; `entry` is `router/main.ts` and `router/edge.ts`. */
const ROUTER_LAYERS = ["runtime", "serve", "control", "operate", "wire", "entry"] as const;

const imports = await sourceImports();

Deno.test("router/ layers: runtime/ ← serve/ ← control/ ← operate/ ← wire/ ← main.ts, edge.ts", () => {
  const wrong = layerViolations(imports, ROUTER_LAYERS);
  assert.deepEqual(
    wrong,
    [],
    `imports against router/'s layers (${ROUTER_LAYERS.join(" ← ")}):${listed(wrong)}`,
  );
});

Deno.test("no production file imports tools/, tests/ or test support; tools/ never tests/", () => {
  const wrong = backwardImports(imports);
  assert.deepEqual(wrong, [], `imports of tools/, tests/ or fixtures:${listed(wrong)}`);
});

Deno.test("shared/ imports only shared/", () => {
  const wrong = sharedViolations(imports);
  assert.deepEqual(wrong, [], `shared/ imports outside shared/:${listed(wrong)}`);
});

Deno.test("router/ and gpu-backend/ never import each other", () => {
  const wrong = crossImports(imports);
  assert.deepEqual(wrong, [], `imports between router/ and gpu-backend/:${listed(wrong)}`);
});

Deno.test("production folders import each other in no loop", () => {
  const loops = folderLoops(imports, []);
  assert.deepEqual(
    loops,
    [],
    loops.map((loop, i) => `folder loop ${i + 1}:${listed(loop)}`).join("\n"),
  );
});

Deno.test("the import rules name each offending import", () => {
  const sample: Import[] = [
    { from: "router/serve/app.ts", to: "router/control/load/load_api.ts" },
    { from: "router/control/load/a.ts", to: "router/operate/metrics/b.ts" },
    { from: "router/control/load/a.ts", to: "router/serve/pool/c.ts" },
    { from: "router/wire/server.ts", to: "router/serve/app.ts" },
    { from: "router/main.ts", to: "router/wire/server.ts" },
    { from: "router/extra/x.ts", to: "router/runtime/clock.ts" },
    { from: "router/runtime/clock.ts", to: "shared/errors.ts" },
    { from: "router/control/forecast/t.ts", to: "tools/model/prng.ts" },
    { from: "gpu-backend/layer/l.ts", to: "tests/_support/x.ts" },
    { from: "router/serve/a.ts", to: "router/serve/testing/fake.ts" },
    { from: "router/control/b.ts", to: "router/control/load/_load_fixture.ts" },
    { from: "gpu-backend/moe/m.ts", to: "router/serve/app.ts" },
    { from: "router/control/traffic/r.ts", to: "router/control/load/p.ts" },
    { from: "router/control/load/h.ts", to: "router/control/traffic/g.ts" },
    { from: "gpu-backend/moe/e.ts", to: "gpu-backend/layer/f.ts" },
    { from: "gpu-backend/layer/f.ts", to: "gpu-backend/moe/r.ts" },
    { from: "tools/bench/dashboard.ts", to: "tests/_support/browser.ts" },
    { from: "tools/plan.ts", to: "router/control/balancer/mod.ts" },
    { from: "shared/config.ts", to: "router/serve/app.ts" },
  ];
  assert.deepEqual(layerViolations(sample, ROUTER_LAYERS), [sample[0], sample[1], sample[5]]);
  assert.deepEqual(backwardImports(sample), [
    sample[7],
    sample[8],
    sample[9],
    sample[10],
    sample[16],
  ]);
  assert.deepEqual(sharedViolations(sample), [sample[18]]);
  assert.deepEqual(crossImports(sample), [sample[11]]);
  assert.deepEqual(folderLoops(sample), [
    [sample[12], sample[13]],
    [sample[14], sample[15]],
  ]);
  assert.deepEqual(folderLoops(sample, ["gpu-backend/moe → gpu-backend/layer"]), [
    [sample[12], sample[13]],
  ]);
  assert.match(
    listed([sample[0]!]),
    /router\/serve\/app\.ts → router\/control\/load\/load_api\.ts/,
  );
});
