/**
 * @module Whether `router/operate/dashboard/assets_bundle.ts` still holds exactly the dashboard's
 * files and the installed ECharts (compared after decoding, so compressor details do not
 * matter). Used by `deno task build:assets --check` and the test suite.
 */
import { ECHARTS_VERSION, FILES } from "../../router/operate/dashboard/assets_bundle.ts";
import { decodeBundled } from "../../router/operate/dashboard/embedded_assets.ts";

/** A sentence naming the first difference, or null when the bundle is current. */
export async function bundleDiffers(
  source: { files: Map<string, Uint8Array>; version: string },
): Promise<string | null> {
  if (ECHARTS_VERSION !== source.version) {
    return `The assets bundle has ECharts ${ECHARTS_VERSION}, node_modules has ${source.version}`;
  }
  const bundled = Object.keys(FILES).sort();
  const wanted = [...source.files.keys()].sort();
  if (JSON.stringify(bundled) !== JSON.stringify(wanted)) {
    return `The assets bundle holds [${bundled}], the sources are [${wanted}]`;
  }
  for (const [name, bytes] of source.files) {
    const decoded = await decodeBundled(FILES[name]!);
    if (decoded.length !== bytes.length || decoded.some((b, i) => b !== bytes[i])) {
      return `The assets bundle's "${name}" differs from the file`;
    }
  }
  return null;
}
