import assert from "node:assert/strict";
import { bundleDiffers } from "../../../tools/edge/bundle_check.ts";
import { sourceFiles } from "../../../tools/edge/build_assets.ts";
import { embeddedAssets } from "./embedded_assets.ts";
import { fileAssets, StaticAssets } from "./static_assets.ts";

Deno.test("the assets bundle is current: run `deno task build:assets` after changing the dashboard", async () => {
  assert.equal(await bundleDiffers(await sourceFiles()), null);
});

Deno.test("AssetSource contract: files and bundle serve the same page, files and ECharts", async () => {
  const [files, bundle] = [new StaticAssets(fileAssets()), new StaticAssets(embeddedAssets())];
  assert.equal(await bundle.echartsVersion(), await files.echartsVersion());
  const bodies = async (assets: StaticAssets) => [
    await (await assets.page()).text(),
    await (await assets.pageFile("dashboard.js", null)).text(),
    (await (await assets.echarts()).arrayBuffer()).byteLength,
    await assets.text("analysis.html"),
  ];
  assert.deepEqual(await bodies(bundle), await bodies(files));
  await assert.rejects(embeddedAssets().file("missing.js"), /Cannot find "missing\.js"/);
});
