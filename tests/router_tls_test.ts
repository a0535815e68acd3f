/**
 * The router serves HTTPS when `router.tls.cert`/`key` are configured: a self-signed
 * certificate made at test time, the router started in-process on a free port, and a
 * client that trusts only that certificate.
 */
import assert from "node:assert/strict";
import { ConfigError, resolveConfig } from "../shared/config.ts";
import { MemoryLogger } from "../shared/logging/memory_logger.ts";
import { startRouter } from "../router/wire/server.ts";

async function selfSignedCert(dir: string): Promise<{ cert: string; key: string }> {
  const cert = `${dir}/cert.pem`;
  const key = `${dir}/key.pem`;
  const output = await new Deno.Command("openssl", {
    args: [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1",
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-addext",
      "extendedKeyUsage=serverAuth",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return { cert, key };
}

Deno.test("startRouter() serves HTTPS with the configured certificate", async () => {
  const dir = await Deno.makeTempDir({ prefix: "switchyard_tls_" });
  try {
    const tls = await selfSignedCert(dir);
    const config = resolveConfig({
      fileText: JSON.stringify({ router: { host: "127.0.0.1", port: 0, tls } }),
    });
    const logger = new MemoryLogger();
    const router = await startRouter(config, { logger });
    const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(tls.cert)] });
    try {
      const url = new URL(router.url);
      assert.equal(url.protocol, "https:");
      assert.equal(logger.find("router listening")[0]?.fields["url"], router.url);
      const live = await fetch(`https://localhost:${url.port}/v2/health/live`, { client });
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { live: true });
      const ready = await fetch(`https://localhost:${url.port}/v2/health/ready`, { client });
      assert.equal(ready.status, 503, "no backends configured, so not ready");
      assert.equal((await ready.json()).details.total_backends, 0);
      // Without the test CA the certificate is not trusted: TLS is real.
      await assert.rejects(fetch(`https://localhost:${url.port}/v2/health/live`));
    } finally {
      client.close();
      await router.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startRouter() rejects an unreadable certificate with a ConfigError naming the field", async () => {
  const config = resolveConfig({
    fileText: JSON.stringify({
      router: { host: "127.0.0.1", port: 0, tls: { cert: "/nonexistent/cert.pem", key: "/x" } },
    }),
  });
  await assert.rejects(
    startRouter(config, { logger: new MemoryLogger() }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.message.includes('router.tls.cert: cannot read "/nonexistent/cert.pem"'),
  );
});
