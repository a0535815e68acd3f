/**
 * The router's `node` front closes what `Deno.serve` could not (issue 12), on real
 * processes: connections beyond `router.max_connections` get 503 + Retry-After and are closed at once while the
 * router keeps answering on the connections it holds and, once they go, on new ones; a
 * connection that never finishes its request head is closed after `router.header_timeout`;
 * a slow body gets its 408 and then the socket is closed. Asserts that the closes
 * happen (and why, from `/metrics`), never how fast: every wait is a generous deadline.
 */
import assert from "node:assert/strict";
import { findSamples, parseExposition } from "../shared/metrics/parse_exposition.ts";
import { encodeInferRequest } from "../shared/infer_request_codec.ts";
import { freePort, type PoolProcess, startPool, startProcess } from "../tools/pool/processes.ts";
import { readAnswer, readUntilClosed, sendPartial, sendWhole } from "../tools/net/raw_http.ts";
import { infer } from "./_support/client.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";
import { waitFor } from "./_support/wait_for.ts";

const CAP = 8;
/** A bound against a hanging test, not a timing assertion. */
const CLOSE_LIMIT_MS = 60_000;

async function closedBy(router: string, reason: string): Promise<number> {
  const text = parseExposition(await (await fetch(`${router}/metrics`)).text());
  return findSamples(text, "switchyard_router_connections_closed_total", { reason })[0]?.value ??
    -1;
}

Deno.test("node front: connection cap, header timeout and slow bodies close sockets", async (t) => {
  const modelDir = await makeTinyModel();
  // Router A: the cap, with timeouts long enough never to close anything in this test.
  const pool = await startPool({
    modelDir,
    backends: 1,
    env: {
      SWITCHYARD_ROUTER__HTTP_SERVER: "node",
      SWITCHYARD_ROUTER__MAX_CONNECTIONS: String(CAP),
      SWITCHYARD_ROUTER__HEADER_TIMEOUT: "10m",
      SWITCHYARD_LIMITS__BODY_TIMEOUT: "10m",
    },
  });
  let routerB: PoolProcess | undefined;
  const held: Deno.Conn[] = [];
  const tokens = new Float32Array(2 * TINY.dModel).fill(0.25);
  const body = new TextDecoder().decode(encodeInferRequest(tokens, TINY.dModel).body);
  try {
    const router = pool.router.url;
    const url = `${router}/v2/models/${TINY.name}/infer`;

    await t.step(
      "beyond max_connections: 503 and closed; held connections still answered",
      async () => {
        assert.equal((await infer(router, TINY.name, tokens, TINY.dModel)).status, 200);
        // A client connected before the flood, on keep-alive.
        const client = await Deno.connect({
          hostname: "127.0.0.1",
          port: Number(new URL(router).port),
        });
        held.push(client);
        await sendWhole(client, { url, body });
        assert.equal((await readAnswer(client)).status, 200);
        // Three times the cap of connections, each sending a request: at most CAP are
        // held, the rest answered 503 and closed.
        const flood = await Promise.all(
          Array.from(
            { length: 3 * CAP },
            () => Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(router).port) }),
          ),
        );
        held.push(...flood);
        await Promise.all(flood.map((conn) => sendWhole(conn, { url, body }).catch(() => {})));
        let closed = 0;
        let answered503 = 0;
        for (const conn of flood) {
          void readUntilClosed(conn, CLOSE_LIMIT_MS).then((r) => {
            if (r.closed) {
              closed++;
              if (/^HTTP\/1\.1 503 [^]*\r\nRetry-After: 1\r\n/i.test(r.text)) answered503++;
            }
          });
        }
        await waitFor(
          "2 × max_connections closes",
          () => Promise.resolve(closed >= 2 * CAP ? true : undefined),
          { timeoutMs: CLOSE_LIMIT_MS },
        );
        // Each refused connection was told so: 503 with Retry-After, not a bare reset.
        assert.ok(answered503 >= 2 * CAP, `${answered503} of ${closed} closes carried a 503`);
        // The connection the router holds is still served.
        await sendWhole(client, { url, body });
        const answer = await readAnswer(client);
        assert.equal(answer.status, 200, answer.body);
        client.close();
        for (const conn of flood) {
          try {
            conn.close();
          } catch {
            /* closed by the server */
          }
        }
        held.length = 0;
        // Once they are gone, new connections are answered again.
        const after = await waitFor("a new connection answered", async () => {
          const call = await infer(router, TINY.name, tokens, TINY.dModel);
          return call.status === 200 ? call : undefined;
        }, { timeoutMs: CLOSE_LIMIT_MS });
        assert.equal(after.status, 200);
        assert.ok(await closedBy(router, "refused") >= 2 * CAP);
      },
    );

    // Router B: short header and body timeouts, in front of the same backend.
    const port = freePort();
    routerB = await startProcess("router/main.ts", {
      url: `http://127.0.0.1:${port}`,
      env: {
        ...pool.routerEnv(),
        SWITCHYARD_ROUTER__PORT: String(port),
        SWITCHYARD_ROUTER__MAX_CONNECTIONS: "1024",
        SWITCHYARD_ROUTER__HEADER_TIMEOUT: "1s",
        SWITCHYARD_LIMITS__BODY_TIMEOUT: "1s",
      },
    });
    const b = routerB.url;
    const urlB = `${b}/v2/models/${TINY.name}/infer`;

    await t.step("a request head that never ends: the socket is closed", async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(
        new TextEncoder().encode(`POST /v2/models/${TINY.name}/infer HTTP/1.1\r\nHo`),
      );
      const result = await readUntilClosed(conn, CLOSE_LIMIT_MS);
      assert.equal(result.closed, true, "the router kept a connection with half a request head");
      assert.ok(await closedBy(b, "header_timeout") >= 1);
    });

    await t.step("a body that never ends: 408, then the socket is closed", async () => {
      const conn = await sendPartial({ url: urlB, contentLength: 10_000, sent: '{"inputs":[' });
      const result = await readUntilClosed(conn, CLOSE_LIMIT_MS);
      assert.equal(result.closed, true, "the router kept a slow-body connection after its 408");
      assert.match(result.text, /^HTTP\/1\.1 408/);
      assert.match(result.text, /limits\.body_timeout/);
      assert.ok(await closedBy(b, "unread_body") >= 1);
    });

    await t.step("valid requests are still answered", async () => {
      assert.equal((await infer(b, TINY.name, tokens, TINY.dModel)).status, 200);
    });
  } finally {
    for (const conn of held) {
      try {
        conn.close();
      } catch { /* closed */ }
    }
    await routerB?.kill();
    await pool.close();
    await Deno.remove(modelDir, { recursive: true }).catch(() => {});
  }
});
