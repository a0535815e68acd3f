/**
 * @module One name, one idea: no exported type, interface, class or enum name is declared
 * in two production files (router/, gpu-backend/ and shared/, `*_test.ts` aside). A wire
 * answer lives in shared/ and both sides import it; two different ideas get two names.
 * The failure names each duplicated type and the files that declare it.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const PRODUCTION = ["router", "gpu-backend", "shared"];

const EXPORTED_TYPE =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:const\s+)?(?:interface|type|class|enum)\s+([A-Za-z_$][\w$]*)/gm;

/** The type names `source` declares with `export` at the start of a line. */
function exportedTypeNames(source: string): string[] {
  return [...source.matchAll(EXPORTED_TYPE)].map((match) => match[1]!);
}

/** Each name declared by more than one file, with the files, sorted. */
function duplicatedNames(
  declared: ReadonlyMap<string, readonly string[]>,
): Array<{ name: string; files: string[] }> {
  const byName = new Map<string, string[]>();
  for (const [file, names] of declared) {
    for (const name of new Set(names)) byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  return [...byName]
    .filter(([, files]) => files.length > 1)
    .map(([name, files]) => ({ name, files: files.sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Repository paths of the production TypeScript files under `folder`, tests aside. */
async function productionFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(new URL(folder, ROOT))) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory) found.push(...await productionFiles(path));
    else if (path.endsWith(".ts") && !path.endsWith("_test.ts")) found.push(path);
  }
  return found;
}

Deno.test("no exported type name is declared twice across router/, gpu-backend/ and shared/", async () => {
  const declared = new Map<string, string[]>();
  for (const folder of PRODUCTION) {
    for (const path of await productionFiles(folder)) {
      declared.set(path, exportedTypeNames(await Deno.readTextFile(new URL(path, ROOT))));
    }
  }
  // The scan is real: it sees the wire contract's plan type.
  assert.ok(declared.get("shared/placement_plan.ts")?.includes("PlacementPlan"));
  const duplicated = duplicatedNames(declared);
  assert.deepEqual(
    duplicated,
    [],
    duplicated.map(({ name, files }) => `${name}: ${files.join(", ")}`).join("\n"),
  );
});

Deno.test("the type-name check finds exported declarations and names each duplicate", () => {
  const source = [
    "export interface Plan {}",
    "export type Weights = number[];",
    "export abstract class Runner {}",
    "export declare const enum Mode { A }",
    "interface Local {}",
    "  export type Indented = 1;",
    "export function plan() {}",
  ].join("\n");
  assert.deepEqual(exportedTypeNames(source), ["Plan", "Weights", "Runner", "Mode"]);
  const declared = new Map([
    ["router/b.ts", ["Plan", "Plan", "Weights"]],
    ["shared/a.ts", ["Plan"]],
    ["gpu-backend/c.ts", ["Runner"]],
  ]);
  assert.deepEqual(duplicatedNames(declared), [
    { name: "Plan", files: ["router/b.ts", "shared/a.ts"] },
  ]);
});
