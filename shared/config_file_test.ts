import assert from "node:assert/strict";
import { configPathFromArgs } from "./config_file.ts";

Deno.test("configPathFromArgs() reads --config <path> and --config=<path>", () => {
  assert.equal(configPathFromArgs(["--config", "a.yaml"]), "a.yaml");
  assert.equal(configPathFromArgs(["-x", "--config=b.json"]), "b.json");
  assert.equal(configPathFromArgs(["--other"]), undefined);
  assert.equal(configPathFromArgs(["--config"]), undefined);
});
