/**
 * @module The import graph of the production code (router/, gpu-backend/, shared/) and of
 * tools/, `*_test.ts` aside, from `deno info --json`, and the house rules over it: each
 * rule returns the offending imports, file → file. `tests/router_imports_test.ts` applies
 * them.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

/** One import between two files of this repository, as repository paths. */
export interface Import {
  from: string;
  to: string;
}

const PRODUCTION = ["router", "gpu-backend", "shared"];
/** Where the rules look: production and the tools (never tests/). */
const SOURCES = [...PRODUCTION, "tools"];

/** A file of router/, gpu-backend/ or shared/ that is not a test. */
export function isProduction(path: string): boolean {
  return PRODUCTION.includes(path.split("/")[0]!) && !path.endsWith("_test.ts");
}

function isSource(path: string): boolean {
  return SOURCES.includes(path.split("/")[0]!) && !path.endsWith("_test.ts");
}

/** Every module of production and tools/ (TypeScript and the dashboard's scripts), tests aside. */
async function sourceFiles(dir = ""): Promise<string[]> {
  const found: string[] = [];
  const names = dir === "" ? [...SOURCES] : [];
  if (dir !== "") {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) names.push(entry.name);
  }
  for (const name of names) {
    const path = dir === "" ? name : `${dir}/${name}`;
    const info = await Deno.stat(new URL(path, ROOT));
    if (info.isDirectory) found.push(...await sourceFiles(path));
    else if (/\.(ts|js)$/.test(name) && isSource(path)) found.push(path);
  }
  return found.sort();
}

/** The repository path of a `file:` specifier inside it, else undefined. */
function repoPath(specifier: string | undefined): string | undefined {
  return specifier?.startsWith(ROOT.href) ? specifier.slice(ROOT.href.length) : undefined;
}

/**
 * Every import (static, dynamic with a literal, type-only) of every file of production and
 * tools/ but tests.
 */
export async function sourceImports(): Promise<Import[]> {
  const files = await sourceFiles();
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      files.map((file) => `import "${new URL(file, ROOT).href}";\n`).join(""),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", new URL("deno.json", ROOT).pathname, entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as {
      modules: Array<{
        specifier: string;
        dependencies?: Array<{ code?: { specifier?: string }; type?: { specifier?: string } }>;
      }>;
    };
    const imports = new Map<string, Import>();
    for (const module of graph.modules) {
      const from = repoPath(module.specifier);
      if (from === undefined || !isSource(from)) continue;
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
          const to = repoPath(target);
          if (to !== undefined) imports.set(`${from} ${to}`, { from, to });
        }
      }
    }
    assert.ok(imports.size > 1000, `the graph holds every production file (${imports.size})`);
    return [...imports.values()];
  } finally {
    await Deno.remove(entry);
  }
}

/** `router/x/…` → `x`; `router/main.ts` → `entry`. */
function routerLayer(path: string): string {
  const parts = path.split("/");
  return parts.length === 2 ? "entry" : parts[1]!;
}

/**
 * Imports from a router layer to a higher one (`layers` lowest first), or from or into a
 * folder of router/ that is no layer.
 */
export function layerViolations(imports: readonly Import[], layers: readonly string[]): Import[] {
  const rank = (path: string) => layers.indexOf(routerLayer(path));
  return imports.filter(({ from, to }) =>
    from.startsWith("router/") && to.startsWith("router/") &&
    (rank(from) < 0 || rank(to) < 0 || rank(to) > rank(from))
  );
}

/** Imports from production into tools/, tests/ or test support, and from tools/ into tests/. */
export function backwardImports(imports: readonly Import[]): Import[] {
  return imports.filter(({ from, to }) =>
    isProduction(from) ? testOrTool(to) : from.startsWith("tools/") && to.startsWith("tests/")
  );
}

/** Imports from shared/ into anything else. */
export function sharedViolations(imports: readonly Import[]): Import[] {
  return imports.filter(({ from, to }) => from.startsWith("shared/") && !to.startsWith("shared/"));
}

/** Whether `path` is tools/, tests/ or test support (a testing/ folder, a _*fixture.ts). */
function testOrTool(path: string): boolean {
  return /^(tools|tests)\//.test(path) || /(^|\/)testing\//.test(path) ||
    /\/_[a-z_]*fixture\.ts$/.test(path);
}

/** Imports between router/ and gpu-backend/, either way. */
export function crossImports(imports: readonly Import[]): Import[] {
  const side = (path: string) => path.split("/")[0];
  return imports.filter(({ from, to }) =>
    ["router", "gpu-backend"].includes(side(from)!) &&
    ["router", "gpu-backend"].includes(side(to)!) && side(from) !== side(to)
  );
}

/** The folder a repository path lies in. */
export function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/"));
}

/**
 * Loops among production folders (strongly connected sets of two or more), each as the
 * imports between its folders, with the folder edges in `allowed` ("a → b") left out.
 */
export function folderLoops(
  imports: readonly Import[],
  allowed: readonly string[] = [],
): Import[][] {
  const edges = imports.filter(({ from, to }) =>
    isProduction(from) && isProduction(to) && folderOf(from) !== folderOf(to) &&
    !allowed.includes(`${folderOf(from)} → ${folderOf(to)}`)
  );
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!next.has(folderOf(from))) next.set(folderOf(from), new Set());
    next.get(folderOf(from))!.add(folderOf(to));
  }
  // Tarjan's strongly connected components over the folder graph.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const loops: Import[][] = [];
  const visit = (folder: string) => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder)!);
    stack.push(folder);
    for (const target of next.get(folder) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(folder, Math.min(low.get(folder)!, low.get(target)!));
      } else if (stack.includes(target)) {
        low.set(folder, Math.min(low.get(folder)!, index.get(target)!));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const members = new Set<string>();
    for (let top = stack.pop()!;; top = stack.pop()!) {
      members.add(top);
      if (top === folder) break;
    }
    if (members.size < 2) return;
    loops.push(
      edges.filter(({ from, to }) => members.has(folderOf(from)) && members.has(folderOf(to))),
    );
  };
  for (const folder of [...next.keys()].sort()) if (!index.has(folder)) visit(folder);
  return loops;
}

/** One line per import, for failure messages. */
export function listed(imports: readonly Import[]): string {
  return imports.map(({ from, to }) => `\n  ${from} → ${to}`).join("");
}
