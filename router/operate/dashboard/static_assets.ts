/**
 * @module The dashboard's files: its own page, stylesheet and ES modules from
 * `router/operate/dashboard/static/`, and ECharts from `node_modules` (no CDN) — read from the
 * files beside the code ({@linkcode fileAssets}, the default), or from a module generated
 * at build time (`embedded_assets.ts`, for hosts without file access such as Deno Deploy).
 *
 * Files are read once and kept in memory (a few hundred KB). ECharts is served at
 * `/dashboard/assets/echarts.js?v=<version>` with a year-long immutable cache: the page
 * names the installed version, so an upgrade changes the URL. The page's own files are
 * revalidated on every load (`no-cache` + ETag), so a new router version shows at once.
 */
import { ApiError } from "../../../shared/errors.ts";

const STATIC_DIR = new URL("./static/", import.meta.url);
const ECHARTS_DIR = new URL("../../../node_modules/echarts/", import.meta.url);

/** Where the dashboard's bytes come from. */
export interface AssetSource {
  /** A file of `router/operate/dashboard/static/` by name (pages and {@linkcode PAGE_FILES}). */
  file(name: string): Promise<Uint8Array<ArrayBuffer>>;
  /** ECharts' ES module build (`dist/echarts.esm.min.js`). */
  echarts(): Promise<Uint8Array<ArrayBuffer>>;
  /** The ECharts version (its package.json). */
  echartsVersion(): Promise<string>;
}

/** The files beside the code, read with `Deno.readFile` (needs read permission). */
export function fileAssets(): AssetSource {
  return {
    file: (name) => Deno.readFile(new URL(name, STATIC_DIR)) as Promise<Uint8Array<ArrayBuffer>>,
    echarts: () =>
      Deno.readFile(new URL("dist/echarts.esm.min.js", ECHARTS_DIR)) as Promise<
        Uint8Array<ArrayBuffer>
      >,
    echartsVersion: async () =>
      String(JSON.parse(await Deno.readTextFile(new URL("package.json", ECHARTS_DIR))).version),
  };
}

/** Path of the ECharts ES module the page imports (plus `?v=<version>`). */
export const ECHARTS_PATH = "/dashboard/assets/echarts.js";

/** The page's own files (served under `/dashboard/static/`), by name → content type. */
export const PAGE_FILES: Readonly<Record<string, string>> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "heat_canvas.js": "text/javascript; charset=utf-8",
  "heat_layout.js": "text/javascript; charset=utf-8",
  "heat_scale.js": "text/javascript; charset=utf-8",
  "panels.js": "text/javascript; charset=utf-8",
  "page_model.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "eplb_panel.js": "text/javascript; charset=utf-8",
  // The Analysis and Advisor pages (routes in router/operate/analysis/analysis_pages.ts).
  "analysis.css": "text/css; charset=utf-8",
  "analysis.js": "text/javascript; charset=utf-8",
  "analysis_charts.js": "text/javascript; charset=utf-8",
  "advisor.js": "text/javascript; charset=utf-8",
};

/** Headers every dashboard document carries: same-origin only, nothing inline. */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

interface LoadedFile {
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
}

async function etagOf(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `"${Array.from(digest.slice(0, 12), (b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

/** Serves the dashboard's files; see the module doc. */
export class StaticAssets {
  readonly #cache = new Map<string, Promise<LoadedFile>>();
  readonly #source: AssetSource;
  #echartsVersion: Promise<string> | undefined;

  constructor(source: AssetSource = fileAssets()) {
    this.#source = source;
  }

  /** A page file as text (the analysis pages), cached like the others. */
  async text(name: string, transform?: (text: string) => string): Promise<string> {
    const file = await this.#load(name, () => this.#source.file(name), transform);
    return new TextDecoder().decode(file.bytes);
  }

  /** The installed ECharts version (from its package.json). */
  echartsVersion(): Promise<string> {
    return this.#echartsVersion ??= this.#source.echartsVersion()
      .catch((error: Error) => {
        this.#echartsVersion = undefined;
        throw new ApiError(
          "internal",
          `Cannot serve the dashboard: node_modules/echarts is missing; run deno install (${error.message})`,
        );
      });
  }

  /** The page, naming the ECharts URL it imports. */
  async page(): Promise<Response> {
    const version = await this.echartsVersion();
    const file = await this.#load(
      "index.html",
      () => this.#source.file("index.html"),
      (text) =>
        text.replaceAll("__ECHARTS_SRC__", `${ECHARTS_PATH}?v=${encodeURIComponent(version)}`),
    );
    return this.#respond(file, "text/html; charset=utf-8", "no-cache", PAGE_SECURITY_HEADERS);
  }

  /** One of {@linkcode PAGE_FILES}, honouring `If-None-Match`. */
  async pageFile(name: string, ifNoneMatch: string | null): Promise<Response> {
    const type = Object.hasOwn(PAGE_FILES, name) ? PAGE_FILES[name] : undefined;
    if (type === undefined) {
      throw new ApiError("not_found", `Cannot find dashboard file "${name}"`);
    }
    const file = await this.#load(name, () => this.#source.file(name));
    if (ifNoneMatch === file.etag) return new Response(null, { status: 304 });
    return this.#respond(file, type, "no-cache");
  }

  /** ECharts' ES module build. */
  async echarts(): Promise<Response> {
    await this.echartsVersion();
    const file = await this.#load("echarts", () => this.#source.echarts());
    return this.#respond(
      file,
      "text/javascript; charset=utf-8",
      "public, max-age=31536000, immutable",
    );
  }

  #load(
    key: string,
    read: () => Promise<Uint8Array<ArrayBuffer>>,
    transform?: (text: string) => string,
  ): Promise<LoadedFile> {
    let file = this.#cache.get(key);
    if (file === undefined) {
      file = (async () => {
        let bytes = await read();
        if (transform) bytes = new TextEncoder().encode(transform(new TextDecoder().decode(bytes)));
        return { bytes, etag: await etagOf(bytes) };
      })();
      // A failed read is retried next time rather than cached.
      file.catch(() => this.#cache.delete(key));
      this.#cache.set(key, file);
    }
    return file;
  }

  #respond(
    file: LoadedFile,
    type: string,
    cache: string,
    extra: Readonly<Record<string, string>> = {},
  ): Response {
    return new Response(file.bytes, {
      headers: {
        "content-type": type,
        "cache-control": cache,
        etag: file.etag,
        "x-content-type-options": "nosniff",
        ...extra,
      },
    });
  }
}
