/**
 * @module The dashboard's files from `assets_bundle.ts`, a module generated at build
 * time (`deno task build:assets`): an {@linkcode AssetSource} that reads nothing from the
 * file system, for hosts such as Deno Deploy. Files are gunzipped on first use.
 */
import { ECHARTS_VERSION, FILES } from "./assets_bundle.ts";
import type { AssetSource } from "./static_assets.ts";

/** base64 of gzip → bytes. */
export async function decodeBundled(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const binary = atob(text);
  const gz = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) gz[i] = binary.charCodeAt(i);
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function bundled(name: string): Promise<Uint8Array<ArrayBuffer>> {
  const text = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (text === undefined) {
    return Promise.reject(new Deno.errors.NotFound(`Cannot find "${name}" in the assets bundle`));
  }
  return decodeBundled(text);
}

/** The bundled dashboard files. */
export function embeddedAssets(): AssetSource {
  return {
    file: (name) => bundled(name),
    echarts: () => bundled("echarts.js"),
    echartsVersion: () => Promise.resolve(ECHARTS_VERSION),
  };
}
