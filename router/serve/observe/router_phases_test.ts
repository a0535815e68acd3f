import assert from "node:assert/strict";
import { routerPhases } from "./router_phases.ts";

Deno.test("routerPhases() splits a request into the router's own time, the network and the backend's", () => {
  const headers = new Headers({ "server-timing": 'exec;dur=1.000;desc="x, y", backend;dur=3.000' });
  assert.deepEqual(routerPhases(5, 4, headers), { router: 1, net: 1, backend: 3, total: 5 });
});

Deno.test("routerPhases() counts a backend that says nothing as network, and never goes negative", () => {
  assert.deepEqual(routerPhases(5, 4, new Headers()), { router: 1, net: 4, backend: 0, total: 5 });
  // A backend claiming more than the attempt took is capped at the attempt.
  const headers = new Headers({ "server-timing": "backend;dur=9" });
  assert.deepEqual(routerPhases(5, 4, headers), { router: 1, net: 0, backend: 4, total: 5 });
});
