import assert from "node:assert/strict";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { ResidencyClient } from "./residency_client.ts";

const BACKEND = { id: "b1", url: "http://b1:9001/" };

Deno.test("ResidencyClient.warm() posts the parts with the token and maps the answer", async () => {
  const seen: { url: string; auth: string | null; body: unknown }[] = [];
  const client = new ResidencyClient({
    clock: new ManualClock(),
    internalToken: "tok-123",
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      seen.push({
        url: String(input),
        auth: headers.get("authorization"),
        body: JSON.parse(String(init?.body)),
      });
      await Promise.resolve();
      return Response.json({
        warmed: ["L0/E1"],
        already_warm: ["L0/E0"],
        evicted: ["L1/E7"],
        skipped: [],
      });
    },
  });
  const result = await client.warm(BACKEND, ["L0/E0", "L0/E1"]);
  assert.deepEqual(seen, [{
    url: "http://b1:9001/v2/residency/warm",
    auth: "Bearer tok-123",
    body: { parts: ["L0/E0", "L0/E1"] },
  }]);
  assert.deepEqual(result, {
    backend: "b1",
    requested: ["L0/E0", "L0/E1"],
    warmed: ["L0/E1"],
    alreadyWarm: ["L0/E0"],
    evicted: ["L1/E7"],
    skipped: [],
  });
});

Deno.test("ResidencyClient.warm() turns failures into results naming the reason", async () => {
  const answer = (response: Response | Error) =>
    new ResidencyClient({
      clock: new ManualClock(),
      fetch: () => response instanceof Error ? Promise.reject(response) : Promise.resolve(response),
    }).warm(BACKEND, ["L0/E0"]);
  const denied = await answer(Response.json({ error: "bad token" }, { status: 401 }));
  assert.equal(denied.error, "HTTP 401: bad token");
  assert.deepEqual(denied.warmed, []);
  assert.equal((await answer(new Error("refused"))).error, "connection failed: refused");
  assert.match((await answer(Response.json({ warmed: "x" }))).error!, /bad answer: warmed/);
});
