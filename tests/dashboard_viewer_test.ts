/**
 * The dashboard behind `auth.viewer_token` with bounded streams, on a real router and
 * backend: anonymous clients get 401 and take no stream, so they cannot lock the
 * operator out; `?token=` trades for a cookie that opens the page and its stream; one
 * client address gets at most `limits.sse_streams_per_client` streams (429 beyond). With
 * `auth.viewer_covers: [api, metrics]` every `/api` read and `/metrics` need the token too
 * (inference never does), and a browser gets a token prompt page instead of JSON.
 */
import assert from "node:assert/strict";
import { startPool } from "../tools/pool/processes.ts";
import { makeTinyModel } from "./_support/tiny_model.ts";

const VIEWER = "viewer-token-for-tests-0123";

/** Reads a stream until its first snapshot event (a readiness wait, no timing assertion). */
async function firstSnapshot(response: Response): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("event: snapshot")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

Deno.test("viewer token and per-client stream bounds keep the dashboard for the operator", async (t) => {
  const modelDir = await makeTinyModel();
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_AUTH__VIEWER_TOKEN: VIEWER,
      SWITCHYARD_AUTH__VIEWER_COVERS: '["api","metrics"]',
      SWITCHYARD_LIMITS__SSE_STREAMS: "4",
      SWITCHYARD_LIMITS__SSE_STREAMS_PER_CLIENT: "2",
    },
  });
  const url = pool.router.url;
  const viewer = { authorization: `Bearer ${VIEWER}` };
  try {
    await t.step("32 anonymous streams are refused and hold nothing", async () => {
      const answers = await Promise.all(
        Array.from({ length: 32 }, () => fetch(`${url}/api/stream`)),
      );
      for (const answer of answers) {
        assert.equal(answer.status, 401);
        assert.match((await answer.json()).error, /auth\.viewer_token/);
      }
      for (const path of ["/dashboard", "/api/dashboard/snapshot", "/dashboard/analysis"]) {
        const answer = await fetch(`${url}${path}`);
        assert.equal(answer.status, 401, path);
        await answer.body?.cancel();
      }
    });

    await t.step("the operator's stream still opens and delivers", async () => {
      const stream = await fetch(`${url}/api/stream`, { headers: viewer });
      assert.equal(stream.status, 200);
      assert.match(await firstSnapshot(stream), /event: snapshot/);
    });

    await t.step("/api reads and /metrics need the token; inference does not", async () => {
      for (const path of ["/api/load", "/api/alerts", "/api/leader", "/api/plan", "/metrics"]) {
        const anonymous = await fetch(`${url}${path}`);
        assert.equal(anonymous.status, 401, path);
        assert.match((await anonymous.json()).error, /auth\.viewer_token/, path);
        const allowed = await fetch(`${url}${path}`, { headers: viewer });
        assert.equal(allowed.status, 200, path);
        await allowed.body?.cancel();
      }
      const live = await fetch(`${url}/v2/health/ready`);
      assert.equal(live.status, 200);
      await live.body?.cancel();
    });

    await t.step("a browser without the token gets a prompt page, not JSON", async () => {
      const page = await fetch(`${url}/dashboard`, { headers: { accept: "text/html" } });
      assert.equal(page.status, 401);
      assert.match(page.headers.get("content-type")!, /text\/html/);
      assert.match(await page.text(), /<input id="token" name="token" type="password"/);
    });

    await t.step("?token= sets a cookie that opens the page and its stream", async () => {
      const first = await fetch(`${url}/dashboard?token=${VIEWER}`, { redirect: "manual" });
      assert.equal(first.status, 303);
      assert.equal(first.headers.get("location"), "/dashboard");
      const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
      const page = await fetch(`${url}/dashboard`, { headers: { cookie } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      const stream = await fetch(`${url}/api/stream`, { headers: { cookie } });
      assert.equal(stream.status, 200);
      assert.match(await firstSnapshot(stream), /event: snapshot/);
    });

    await t.step("one client address gets at most sse_streams_per_client streams", async () => {
      // Streams of the steps above may still be closing on the server: open until refused.
      const open: Response[] = [];
      let refused: Response | undefined;
      for (let i = 0; i < 10 && refused === undefined; i++) {
        const stream = await fetch(`${url}/api/stream`, { headers: viewer });
        if (stream.status === 200) open.push(stream);
        else refused = stream;
      }
      assert.ok(refused, "10 streams from one address were all accepted");
      assert.ok(open.length <= 2, `${open.length} streams open from one address`);
      assert.equal(refused.status, 429);
      assert.ok(refused.headers.get("retry-after"));
      assert.match((await refused.json()).error, /limits\.sse_streams_per_client/);
      for (const stream of open) await stream.body!.cancel();
    });
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
