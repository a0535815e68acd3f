import assert from "node:assert/strict";
import { decideViewer, gated, tokenPromptPage, VIEWER_COOKIE } from "./viewer_gate.ts";

const tokens = { viewer: "viewer-token-0123456789", admin: "admin-token-0123456789" };
const at = (path: string, headers: Record<string, string> = {}) =>
  new Request(`http://router${path}`, { headers });

Deno.test("gated() covers the dashboard, its files and streams, nothing else", () => {
  for (
    const path of [
      "/dashboard",
      "/dashboard/",
      "/dashboard/analysis",
      "/dashboard/static/a.js",
      "/api/stream",
      "/api/dashboard/snapshot",
    ]
  ) {
    assert.equal(gated(path), true, path);
  }
  for (
    const path of ["/api/load", "/v2/models/m/infer", "/metrics", "/dashboards", "/api/streamx"]
  ) {
    assert.equal(gated(path), false, path);
  }
});

Deno.test("decideViewer() passes the viewer or admin token as bearer or cookie", () => {
  for (const token of [tokens.viewer, tokens.admin]) {
    assert.equal(
      decideViewer(at("/api/stream", { authorization: `Bearer ${token}` }), tokens).kind,
      "pass",
    );
    assert.equal(
      decideViewer(at("/api/stream", { cookie: `a=b; ${VIEWER_COOKIE}=${token}` }), tokens).kind,
      "pass",
    );
  }
});

Deno.test("decideViewer() trades ?token= for a cookie and a clean URL", () => {
  const decision = decideViewer(at(`/dashboard?model=m&token=${tokens.viewer}`), tokens);
  assert.equal(decision.kind, "redirect");
  if (decision.kind !== "redirect") return;
  assert.equal(decision.location, "/dashboard?model=m");
  assert.match(
    decision.setCookie,
    new RegExp(`^${VIEWER_COOKIE}=${tokens.viewer}; Path=/; HttpOnly; SameSite=Strict$`),
  );
});

Deno.test("decideViewer() refuses no token or a wrong one with a 401 naming the setting", () => {
  for (
    const request of [
      at("/api/stream"),
      at("/api/stream", { authorization: "Bearer nope-nope-nope-nope" }),
      at("/api/stream", { cookie: `${VIEWER_COOKIE}=wrong` }),
      at("/dashboard?token=wrong"),
    ]
  ) {
    const decision = decideViewer(request, tokens);
    assert.equal(decision.kind, "refuse");
    if (decision.kind === "refuse") {
      assert.equal(decision.error.status, 401);
      assert.match(decision.error.message, /auth\.viewer_token/);
    }
  }
});

Deno.test("gated() with auth.viewer_covers: /api reads and /metrics, never inference or writes", () => {
  const covers = ["api", "metrics"] as const;
  assert.equal(gated("/api/load", "GET", covers), true);
  assert.equal(gated("/api/alerts", "HEAD", covers), true);
  assert.equal(gated("/metrics", "GET", covers), true);
  assert.equal(gated("/api/plan/apply", "POST", covers), false, "writes keep their own auth");
  assert.equal(gated("/v2/models/m/infer", "POST", covers), false);
  assert.equal(gated("/api/load", "GET", ["metrics"]), false);
  assert.equal(gated("/metrics", "GET", ["api"]), false);
});

Deno.test("a browser asking for a page without the token gets the prompt page, an API client JSON", async () => {
  const browser = decideViewer(at("/dashboard", { accept: "text/html,*/*" }), tokens);
  assert.equal(browser.kind === "refuse" && browser.prompt, true);
  const api = decideViewer(at("/api/load", { accept: "application/json" }), tokens);
  assert.equal(api.kind === "refuse" && api.prompt, false);
  assert.match(api.kind === "refuse" ? api.error.message : "", /^Cannot read \/api\/load:/);
  const page = tokenPromptPage();
  assert.equal(page.status, 401);
  const html = await page.text();
  assert.match(html, /<form method="get">/);
  assert.match(html, /name="token" type="password"/);
  assert.match(page.headers.get("content-security-policy")!, /default-src 'none'/);
});
