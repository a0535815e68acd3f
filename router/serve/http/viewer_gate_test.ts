import assert from "node:assert/strict";
import { decideViewer, gated, VIEWER_COOKIE } from "./viewer_gate.ts";

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
