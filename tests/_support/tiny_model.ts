/**
 * @module Test support: a small generated model (every feature on: 2 layers, expert
 * groups with group-limited top-k, a shared expert) in a temporary directory.
 */
import { generateModel } from "../../tools/model/generate.ts";

/** Shape of the tiny test model. */
export const TINY = {
  name: "tiny-moe",
  dModel: 32,
  dFf: 64,
  layers: 2,
  experts: 8,
  topK: 2,
  groups: 2,
  topkGroup: 1,
  sharedExperts: 1,
} as const;

/** Generates the tiny model into a new temp dir; returns the dir. */
export async function makeTinyModel(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-tiny-" });
  await generateModel(dir, { ...TINY, seed: 7, requestTypes: ["chat", "code", "math"] });
  return dir;
}
