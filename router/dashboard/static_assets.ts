/**
 * @module The dashboard's files: its own page, stylesheet and ES modules from
 * `router/dashboard/static/`, and ECharts from `node_modules` (no CDN, no build step).
 *
 * Files are read once and kept in memory (a few hundred KB). ECharts is served at
 * `/dashboard/assets/echarts.js?v=<version>` with a year-long immutable cache: the page
 * names the installed version, so an upgrade changes the URL. The page's own files are
 * revalidated on every load (`no-cache` + ETag), so a new router version shows at once.
 */
import { ApiError } from "../../shared/errors.ts";

const STATIC_DIR = new URL("./static/", import.meta.url);
const ECHARTS_DIR = new URL("../../node_modules/echarts/", import.meta.url);

/** Path of the ECharts ES module the page imports (plus `?v=<version>`). */
export const ECHARTS_PATH = "/dashboard/assets/echarts.js";

/** The page's own files (served under `/dashboard/static/`), by name → content type. */
export const PAGE_FILES: Readonly<Record<string, string>> = {
  "dashboard.css": "text/css; charset=utf-8",
  "dashboard.js": "text/javascript; charset=utf-8",
  "charts.js": "text/javascript; charset=utf-8",
  "panels.js": "text/javascript; charset=utf-8",
  "page_model.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  // The Analysis and Advisor pages (routes in router/analysis/analysis_pages.ts).
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
  #echartsVersion: Promise<string> | undefined;

  /** The installed ECharts version (from its package.json). */
  echartsVersion(): Promise<string> {
    return this.#echartsVersion ??= Deno.readTextFile(new URL("package.json", ECHARTS_DIR))
      .then((text) => String(JSON.parse(text).version))
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
      new URL("index.html", STATIC_DIR),
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
    const file = await this.#load(name, new URL(name, STATIC_DIR));
    if (ifNoneMatch === file.etag) return new Response(null, { status: 304 });
    return this.#respond(file, type, "no-cache");
  }

  /** ECharts' ES module build. */
  async echarts(): Promise<Response> {
    await this.echartsVersion();
    const file = await this.#load("echarts", new URL("dist/echarts.esm.min.js", ECHARTS_DIR));
    return this.#respond(
      file,
      "text/javascript; charset=utf-8",
      "public, max-age=31536000, immutable",
    );
  }

  #load(
    key: string,
    url: URL,
    transform?: (text: string) => string,
  ): Promise<LoadedFile> {
    let file = this.#cache.get(key);
    if (file === undefined) {
      file = (async () => {
        let bytes = await Deno.readFile(url) as Uint8Array<ArrayBuffer>;
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
