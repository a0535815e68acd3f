/**
 * Expert parallelism over real processes (the layer path): three backends each hosting
 * part of the experts under a placement plan, requests entering anywhere, rows for
 * remote experts travelling over the peer channel. Outputs must equal single-backend
 * execution and the per-expert path (≤ 1e-5) and the reference (≤ 1e-4); a plan switch
 * under load (layer executables rebuilt and swapped) must lose nothing and answer
 * nothing differently; a dead peer's experts must be served by other replicas, or fail
 * with a 503 naming the expert.
 */
import assert from "node:assert/strict";
import type { PlacementPlan } from "../shared/placement_plan.ts";
import { createRandom } from "../tools/model/prng.ts";
import { loadReferenceModel } from "../tools/model/reference.ts";
import { demoTokens, loadDemoTraffic } from "../tools/model/traffic.ts";
import { startPool, type TestPool } from "../tools/pool/processes.ts";
import { ownerHeaders } from "../shared/plan_owner.ts";
import { infer, maxAbsDiff } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { perExpertOutputs } from "./_support/per_expert.ts";
import { parseServerTiming } from "../shared/server_timing.ts";

function plan(pool: TestPool, version: number, layers: number[][]): PlacementPlan {
  return {
    model: TINY.name,
    version,
    createdAt: Date.now(),
    reason: "test",
    backends: pool.backends.map((b, i) => ({ id: `backend-${i + 1}`, url: b.url })),
    slotsPerBackend: layers[0]!.length / pool.backends.length,
    layers: layers.map((phy2log) => ({ phy2log })),
  };
}

async function call(pool: TestPool, backend: number, path: string, method: string, body?: unknown) {
  const url = pool.backends[backend]!.url;
  const auth = { authorization: `Bearer ${pool.token}` };
  // The test steers on behalf of the pool's router: its calls carry the pool and term the
  // backend follows (the router's replica-weight pushes claim it; shared/plan_owner.ts).
  const { owner } = await (await fetch(`${url}/v2/plan`, { headers: auth })).json();
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...auth,
      "content-type": "application/json",
      ...(owner ? ownerHeaders(owner) : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  return json;
}

/** Stage on all, then activate on all, then release on all — the router's protocol. */
async function switchTo(pool: TestPool, next: PlacementPlan): Promise<void> {
  await Promise.all(pool.backends.map((_, i) => call(pool, i, "/v2/plan", "PUT", next)));
  await Promise.all(
    pool.backends.map((_, i) =>
      call(pool, i, "/v2/plan/activate", "POST", { version: next.version })
    ),
  );
  await Promise.all(
    pool.backends.map((_, i) =>
      call(pool, i, "/v2/plan/release", "POST", { version: next.version })
    ),
  );
}

// 8 experts, 3 backends × 4 slots: each backend hosts a different subset; some replicated.
const SPREAD = [[0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6], [7, 6, 5, 4, 3, 2, 1, 0, 1, 3, 5, 7]];
const SHIFTED = [[4, 5, 6, 7, 0, 1, 2, 3, 1, 3, 5, 7], [0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4]];
// Backend-1 hosts experts 0–3 only; 4–7 live on backends 2 and 3.
const SPLIT = [[0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7]];
// Expert 7 of layer 0 only on backend-3; every other expert also on backend-1 or -2.
const LONELY = [[0, 1, 2, 3, 4, 5, 6, 0, 7, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]];

Deno.test("expert parallelism across 3 backends matches single-backend execution", async (t) => {
  const modelDir = await makeTinyModel();
  const reference = await loadReferenceModel(modelDir);
  const traffic = (await loadDemoTraffic(modelDir))!;
  // The test drives the backends' plan endpoints itself (the router's balancer is off),
  // and asks for a 503 when no replica of an expert is reachable.
  const pool = await startPool({
    modelDir,
    backends: 3,
    env: {
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "off",
      SWITCHYARD_EXPERT_BALANCER__ON_UNREACHABLE: "fail",
    },
    // Each way of handling a layer's peer rows on one backend: overlapped with the local
    // experts, after them, or as the backend's load decides.
    backendEnv: (i) => ({ SWITCHYARD_BACKEND__OVERLAP_HOPS: ["always", "never", "auto"][i]! }),
  });
  const random = createRandom(21);
  const requests = Array.from({ length: 24 }, (_, i) => {
    const rows = 1 + (i % 6);
    return { rows, tokens: demoTokens(traffic, ["chat", "code", "math"][i % 3]!, rows, random) };
  });
  try {
    // Every backend hosts everything before any plan: the single-backend answers.
    const single = await Promise.all(requests.map(async (r) => {
      const res = await infer(pool.router.url, TINY.name, r.tokens, TINY.dModel);
      return res.decoded!.tensors.get("output")!.data;
    }));
    // The same requests on the per-expert path, in this process.
    const perExpert = await perExpertOutputs(modelDir, requests);
    single.forEach((output, i) =>
      assert.ok(maxAbsDiff(output, perExpert[i]!) <= 1e-5, `request ${i}: layer vs per-expert`)
    );
    const ready = await call(pool, 0, "/v2/health/ready", "GET");
    assert.equal(ready.details.execution, "layer");

    await t.step("a spread plan gives the same answers and uses the peer channel", async () => {
      await switchTo(pool, plan(pool, 1, SPREAD));
      const status = await call(pool, 0, "/v2/plan", "GET");
      assert.equal(status.active, 1);
      const calls = await Promise.all(
        requests.map((r) =>
          infer(pool.router.url, TINY.name, r.tokens, TINY.dModel, {
            binaryInput: true,
            binaryOutputs: true,
          })
        ),
      );
      calls.forEach((res, i) => {
        assert.equal(res.status, 200, JSON.stringify(res.error));
        const output = res.decoded!.tensors.get("output")!.data;
        assert.ok(maxAbsDiff(output, single[i]!) <= 1e-5, `request ${i} vs single backend`);
        assert.ok(maxAbsDiff(output, perExpert[i]!) <= 1e-5, `request ${i} vs per-expert path`);
        const expected = reference.forward(requests[i]!.tokens, requests[i]!.rows).output;
        assert.ok(maxAbsDiff(output, expected) <= 1e-4, `request ${i} vs reference`);
      });
      const peers = await Promise.all(
        pool.backends.map((_, i) => call(pool, i, "/v2/plan", "GET")),
      );
      const sent = peers.flatMap((p) =>
        Object.values(p.peers) as { frames: number; items: number }[]
      );
      const frames = sent.reduce((sum, s) => sum + s.frames, 0);
      const items = sent.reduce((sum, s) => sum + s.items, 0);
      assert.ok(frames > 0, "rows crossed the peer channel");
      assert.ok(items > frames, `frames carry several items (${items} items in ${frames} frames)`);
    });

    await t.step(
      "a request crossing backends in every layer answers as one that stays local, and its Server-Timing names the hops",
      async () => {
        await switchTo(pool, plan(pool, 5, SPLIT));
        // Tokens whose top-k experts are all on one side of the split in every layer.
        const pick = (high: boolean) => {
          for (let i = 0; i < 2000; i++) {
            const tokens = demoTokens(traffic, ["chat", "code", "math"][i % 3]!, 1, random);
            const ids = reference.forward(tokens, 1).expertIds;
            if ([...ids].every((e) => (e >= 4) === high)) return tokens;
          }
          throw new Error(`no token with every expert ${high ? ">= 4" : "< 4"} found`);
        };
        const headers = { authorization: `Bearer ${pool.token}` };
        const cases = [
          // backend-1 (overlap always) hosts 0–3: experts 4–7 are remote in every layer.
          { backend: 0, tokens: pick(true), crossing: TINY.layers },
          // backend-2 (overlap never) hosts 4–7: experts 0–3 are remote in every layer.
          { backend: 1, tokens: pick(false), crossing: TINY.layers },
          // Every expert local on backend-1.
          { backend: 0, tokens: pick(false), crossing: 0 },
        ];
        for (const { backend, tokens, crossing } of cases) {
          const res = await infer(pool.backends[backend]!.url, TINY.name, tokens, TINY.dModel, {
            headers,
          });
          assert.equal(res.status, 200, JSON.stringify(res.error));
          const output = res.decoded!.tensors.get("output")!.data;
          const [perExpert] = await perExpertOutputs(modelDir, [{ rows: 1, tokens }]);
          const label = `backend-${backend + 1}, ${crossing} crossing layers`;
          assert.ok(maxAbsDiff(output, perExpert!) <= 1e-5, `${label}: vs per-expert path`);
          const timing = parseServerTiming(res.headers.get("server-timing"));
          const hop = timing.find((m) => m.name === "hop");
          assert.ok(hop, `${label}: Server-Timing names the hop`);
          if (crossing > 0) {
            assert.match(hop.desc!, new RegExp(`^${crossing} layer\\(s\\), ${crossing} row`));
          } else assert.equal(hop.desc, "no layer crossed backends");
          assert.ok(timing.find((m) => m.name === "backend")!.ms > 0);
        }
      },
    );

    await t.step("a plan switch under load loses nothing and answers correctly", async () => {
      let stop = false;
      let sent = 0;
      const failures: string[] = [];
      const loops = Array.from({ length: 4 }, async (_, loop) => {
        while (!stop) {
          const r = requests[(sent++ + loop) % requests.length]!;
          const res = await infer(pool.router.url, TINY.name, r.tokens, TINY.dModel);
          if (res.status !== 200) failures.push(JSON.stringify(res.error));
          else {
            const output = res.decoded!.tensors.get("output")!.data;
            const expected = reference.forward(r.tokens, r.rows).output;
            const diff = maxAbsDiff(output, expected);
            if (diff > 1e-4) failures.push(`wrong answer (max diff ${diff})`);
            const index = requests.indexOf(r);
            const same = maxAbsDiff(output, single[index]!);
            if (same > 1e-5) failures.push(`different answer (max diff ${same})`);
          }
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const keys = async () =>
        (await call(pool, 0, "/v2/health/ready", "GET")).details.layers.map((l: { key: string }) =>
          l.key
        ).join();
      const before = await keys();
      await switchTo(pool, plan(pool, 2, SHIFTED));
      assert.notEqual(await keys(), before, "the switch swapped in rebuilt layer executables");
      await new Promise((resolve) => setTimeout(resolve, 300));
      await switchTo(pool, plan(pool, 3, SPREAD));
      await new Promise((resolve) => setTimeout(resolve, 300));
      stop = true;
      await Promise.all(loops);
      assert.deepEqual(failures, []);
      assert.ok(sent > 20, `only ${sent} requests during the switches`);
    });

    await t.step(
      "a dead peer's experts are served by other replicas, or fail naming the expert",
      async () => {
        await switchTo(pool, plan(pool, 4, LONELY));
        await pool.backends[2]!.kill();
        // Tokens of every type: some select expert 7 in layer 0 (only on the dead backend).
        let ok = 0;
        const unavailable = new Set<string>();
        for (const r of requests) {
          const res = await infer(pool.router.url, TINY.name, r.tokens, TINY.dModel);
          if (res.status === 200) {
            ok++;
            const expected = reference.forward(r.tokens, r.rows).output;
            assert.ok(maxAbsDiff(res.decoded!.tensors.get("output")!.data, expected) <= 1e-4);
          } else {
            assert.equal(res.status, 503, JSON.stringify(res.error));
            unavailable.add(res.error!.error);
          }
        }
        for (const message of unavailable) {
          assert.match(message, /expert L0\/E7 has no reachable replica/);
        }
        // Requests that never touch expert L0/E7 still succeed.
        const uses7 = requests.map((r) => {
          const ids = reference.forward(r.tokens, r.rows).expertIds;
          return [...ids.subarray(0, r.rows * TINY.topK)].includes(7);
        });
        assert.ok(uses7.some(Boolean), "some requests need the lonely expert");
        assert.equal(ok, uses7.filter((u) => !u).length);
      },
    );
  } finally {
    await pool.close();
    await Deno.remove(modelDir, { recursive: true });
  }
});
