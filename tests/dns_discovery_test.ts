/**
 * DNS discovery against a real DNS server: dnsmasq on loopback (Debian's dnsmasq-base)
 * answers A and SRV records for backends on 127.0.0.2 and 127.0.0.3; the router
 * re-resolves every 500 ms. A backend removed from the records leaves the pool, added
 * back it returns, and requests reach exactly the backends the records name. Prints how
 * many re-resolve intervals each change took (the target: at most 2).
 */
import assert from "node:assert/strict";
import { createJsonLogger } from "../shared/logger.ts";
import { resolveConfig } from "../shared/config.ts";
import { dnsSource } from "../router/control/discovery/dns_source.ts";
import { startRouter } from "../router/wire/server.ts";
import { FakeBackend } from "./_support/router/fake_backend.ts";
import { freePort } from "../tools/pool/processes.ts";
import { waitFor, type WaitForOptions } from "./_support/wait_for.ts";

const DNSMASQ = ["/usr/sbin/dnsmasq", "dnsmasq"];
const INTERVAL_MS = 500;

async function findDnsmasq(): Promise<string | undefined> {
  for (const path of DNSMASQ) {
    try {
      const { code } = await new Deno.Command(path, { args: ["--version"], stdout: "null" })
        .output();
      if (code === 0) return path;
    } catch { /* not here */ }
  }
  return undefined;
}

/** A free port on every address in `hosts` (bound and released). */
function sharedFreePort(hosts: string[]): number {
  for (;;) {
    const port = freePort();
    try {
      for (const hostname of hosts) Deno.listen({ hostname, port }).close();
      return port;
    } catch { /* taken on one address: try another */ }
  }
}

/** Membership changes are timed (reported below): probe every 20 ms, for up to 30 s. */
const PROMPT: WaitForOptions = { timeoutMs: 30_000, intervalMs: 20, retryErrors: false };

Deno.test("dns discovery follows a real DNS server: backends on 127.0.0.x added and removed", async (t) => {
  const dnsmasq = await findDnsmasq();
  if (dnsmasq === undefined) {
    if (Deno.env.get("CI")) {
      assert.fail("dnsmasq is required under CI (.ci/run installs dnsmasq-base)");
    }
    return;
  }
  const hosts = ["127.0.0.2", "127.0.0.3"];
  const port = sharedFreePort(hosts);
  const backends = hosts.map((hostname, i) => {
    const backend = new FakeBackend({
      id: `${hostname}:${port}`,
      internalToken: "internal-token-0123456789",
      details: { backend_id: `backend-${i + 2}` },
    });
    return Deno.serve({ hostname, port, onListen: () => {} }, backend.app.fetch);
  });
  const dir = await Deno.makeTempDir({ prefix: "switchyard-dns-" });
  const hostsFile = `${dir}/hosts`;
  const records = (ips: string[]) =>
    Deno.writeTextFile(
      hostsFile,
      ips.map((ip) => `${ip} pool.test b${ip.at(-1)}.pool.test\n`).join(""),
    );
  await records(hosts);
  const dnsPort = freePort();
  const server = new Deno.Command(dnsmasq, {
    args: [
      "--no-daemon",
      `--port=${dnsPort}`,
      "--listen-address=127.0.0.1",
      "--bind-interfaces",
      "--no-resolv",
      "--no-hosts",
      `--addn-hosts=${hostsFile}`,
      `--srv-host=_http._tcp.pool.test,b2.pool.test,${port}`,
      `--srv-host=_http._tcp.pool.test,b3.pool.test,${port}`,
      "--user=root",
      "--pid-file=",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(server.stderr).text();
  const nameserver = `127.0.0.1:${dnsPort}`;
  const urls = hosts.map((ip) => `http://${ip}:${port}`);
  let router: Awaited<ReturnType<typeof startRouter>> | undefined;
  try {
    // dnsmasq answers once it has read the hosts file.
    const srv = dnsSource({
      name: "_http._tcp.pool.test",
      record: "SRV",
      port: 1,
      scheme: "http",
      nameserver,
    });
    let found: string[] = [];
    for (let i = 0; i < 100 && found.length < 2; i++) {
      found = await srv.list().catch(() => []);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    await t.step("SRV records resolve to every backend's address and port", () => {
      assert.deepEqual(found, urls);
    });

    const config = resolveConfig({
      env: {
        SWITCHYARD_ROUTER__HOST: "127.0.0.1",
        SWITCHYARD_ROUTER__PORT: "0",
        SWITCHYARD_ROUTER__DISCOVERY__MODE: "dns",
        SWITCHYARD_ROUTER__DISCOVERY__NAME: "pool.test",
        SWITCHYARD_ROUTER__DISCOVERY__PORT: String(port),
        SWITCHYARD_ROUTER__DISCOVERY__NAMESERVER: nameserver,
        SWITCHYARD_ROUTER__DISCOVERY__INTERVAL: `${INTERVAL_MS}ms`,
        SWITCHYARD_ROUTER__HEALTH_INTERVAL: "200ms",
        SWITCHYARD_AUTH__INTERNAL_TOKEN: "internal-token-0123456789",
        SWITCHYARD_STATE__KV: ":memory:",
        SWITCHYARD_LOG__DIR: "",
      },
    });
    router = await startRouter(config, {
      logger: createJsonLogger({ level: "error", write: () => {} }),
    });
    const pool = router.pool;
    const healthy = () => pool.views().filter((v) => v.healthy).map((v) => v.url).sort();

    await t.step("the router's pool is what the A records name", async () => {
      assert.deepEqual(pool.urls().sort(), urls);
      await waitFor("both healthy", () => healthy().length === 2, PROMPT);
    });

    const intervals: string[] = [];
    await t.step(
      "a backend removed from DNS leaves the pool; requests go to the other",
      async () => {
        await records([hosts[0]!]);
        server.kill("SIGHUP");
        const removing = Date.now();
        await waitFor("removal", () => pool.urls().length === 1, PROMPT);
        const ms = Date.now() - removing;
        intervals.push(`removed after ${ms} ms (${(ms / INTERVAL_MS).toFixed(1)} intervals)`);
        assert.deepEqual(pool.urls(), [urls[0]]);
        for (let i = 0; i < 6; i++) {
          const response = await fetch(`${router!.url}/v2/models/tiny/infer`, {
            method: "POST",
            body: JSON.stringify({
              inputs: [{ name: "input", shape: [1, 4], datatype: "FP32", data: [1, 2, 3, 4] }],
            }),
          });
          assert.equal(response.status, 200);
          assert.equal(response.headers.get("x-switchyard-backend"), "backend-2");
          await response.body?.cancel();
        }
      },
    );

    await t.step("added back to DNS, it rejoins the pool and rotation", async () => {
      await records(hosts);
      server.kill("SIGHUP");
      const adding = Date.now();
      await waitFor("addition", () => pool.urls().length === 2, PROMPT);
      const ms = Date.now() - adding;
      intervals.push(`added after ${ms} ms (${(ms / INTERVAL_MS).toFixed(1)} intervals)`);
      await waitFor("both healthy again", () => healthy().length === 2, PROMPT);
    });
    // deno-lint-ignore no-console
    console.log(`DNS discovery (re-resolve every ${INTERVAL_MS} ms): ${intervals.join("; ")}`);
  } finally {
    await router?.close();
    server.kill("SIGTERM");
    await server.status;
    await stderr;
    await Promise.all(backends.map((b) => b.shutdown()));
    await Deno.remove(dir, { recursive: true });
  }
});
