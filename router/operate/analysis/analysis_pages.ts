/**
 * @module The dashboard's Analysis and Advisor pages (read-only, like the main dashboard,
 * and behind `auth.viewer_token` with it when set): `GET /dashboard/analysis` and
 * `GET /dashboard/advisor`. Their scripts and stylesheet are served by the dashboard's static route (`/dashboard/static/…`, listed
 * in `PAGE_FILES`); ECharts comes from the same versioned asset URL as the main page.
 */
import { Hono } from "hono";
import { ECHARTS_PATH, PAGE_SECURITY_HEADERS, StaticAssets } from "../dashboard/static_assets.ts";

/** The pages, by route → file under `router/operate/dashboard/static/`. */
export const ANALYSIS_PAGES: Readonly<Record<string, string>> = {
  "/dashboard/analysis": "analysis.html",
  "/dashboard/advisor": "advisor.html",
};

/**
 * The two pages as a Hono app, mounted with `app.route("/", …)` (files from `assets`,
 * default the files beside the code).
 */
export function analysisPages(assets: StaticAssets = new StaticAssets()): Hono {
  const app = new Hono();
  const load = async (file: string) => {
    const version = await assets.echartsVersion();
    const src = `${ECHARTS_PATH}?v=${encodeURIComponent(version)}`;
    return await assets.text(file, (html) => html.replaceAll("__ECHARTS_SRC__", src));
  };
  for (const [route, file] of Object.entries(ANALYSIS_PAGES)) {
    app.get(route, async () =>
      new Response(await load(file), {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache",
          ...PAGE_SECURITY_HEADERS,
        },
      }));
  }
  return app;
}
