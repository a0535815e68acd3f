/**
 * HTTPS through `deno task start` with both kinds of certificate an operator makes:
 * - a plain self-signed one (`openssl req -x509 …`, no extensions: `CA:TRUE`, no SAN) —
 *   the launcher's probe trusts the certificate itself; the CLIs find the router from the
 *   same env and trust it too (`deno task doctor`);
 * - a leaf signed by a private CA, with `router.tls.ca` naming the CA — plain `fetch`
 *   with that CA works as well.
 * In both cases the banner prints `https://localhost:<port>` and the router serves.
 */
import assert from "node:assert/strict";
import { createTrustedFetch } from "../tools/client/trusted_fetch.ts";
import { startLauncher } from "./_support/launcher.ts";
import { makeTinyModel, TINY } from "./_support/tiny_model.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function openssl(args: string[], cwd: string): Promise<void> {
  const output = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
}

/** What most people type: no SAN, no key usage, `basicConstraints CA:TRUE` by default. */
async function plainSelfSigned(dir: string): Promise<{ cert: string; key: string }> {
  await openssl(
    [...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]].concat(
      ["-subj", "/CN=localhost", "-keyout", "key.pem", "-out", "cert.pem"],
    ),
    dir,
  );
  return { cert: `${dir}/cert.pem`, key: `${dir}/key.pem` };
}

/** A private CA and a server certificate it signed for localhost. */
async function caSigned(dir: string): Promise<{ cert: string; key: string; ca: string }> {
  await openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Test CA"]
      .concat(["-keyout", "ca.key", "-out", "ca.pem"]),
    dir,
  );
  await openssl(
    ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost"]
      .concat(["-keyout", "leaf.key", "-out", "leaf.csr"]),
    dir,
  );
  await Deno.writeTextFile(
    `${dir}/leaf.ext`,
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n" +
      "extendedKeyUsage=serverAuth\n",
  );
  await openssl(
    ["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"]
      .concat(["-days", "1", "-extfile", "leaf.ext", "-out", "leaf.pem"]),
    dir,
  );
  return { cert: `${dir}/leaf.pem`, key: `${dir}/leaf.key`, ca: `${dir}/ca.pem` };
}

async function withTlsLauncher(
  modelDir: string,
  tls: { cert: string; key: string; ca?: string },
  check: (router: string, env: Record<string, string>) => Promise<void>,
): Promise<void> {
  const launcher = await startLauncher({
    env: {
      SWITCHYARD_MODEL__DIR: modelDir,
      SWITCHYARD_ROUTER__TLS__CERT: tls.cert,
      SWITCHYARD_ROUTER__TLS__KEY: tls.key,
      ...(tls.ca ? { SWITCHYARD_ROUTER__TLS__CA: tls.ca } : {}),
    },
  });
  try {
    const status = await launcher.waitStatus((s) => s.router.pid !== null);
    await launcher.waitOutput(/Switchyard is up/);
    const router = status.router.url;
    assert.match(router, /^https:\/\/localhost:\d+$/);
    assert.match(launcher.output(), new RegExp(`router +${router} `));
    assert.match(launcher.output(), new RegExp(`curl -s --cacert ${tls.ca ?? tls.cert} ${router}`));
    await check(router, launcher.env);
    assert.equal(await launcher.stop(), 0);
  } finally {
    await launcher.stop();
    await launcher.cleanup();
  }
}

Deno.test("deno task start serves HTTPS with a plain self-signed certificate and a CA-signed one", async (t) => {
  const modelDir = await makeTinyModel();
  const dir = await Deno.makeTempDir({ prefix: "switchyard-tls-" });
  try {
    await t.step("plain self-signed: the probe and the CLIs trust the certificate", async () => {
      const tls = await plainSelfSigned(await Deno.makeTempDir({ dir }));
      await withTlsLauncher(modelDir, tls, async (router, env) => {
        const trusted = createTrustedFetch({ ca: await Deno.readTextFile(tls.cert) });
        try {
          const response = await trusted(`${router}/v2/models/${TINY.name}`);
          assert.equal(response.status, 200);
          assert.equal((await response.json()).name, TINY.name);
        } finally {
          trusted.close();
        }
        await assert.rejects(fetch(`${router}/v2/health/live`), "untrusted without the cert");
        const doctor = await new Deno.Command(Deno.execPath(), {
          args: ["task", "doctor"],
          cwd: ROOT,
          env,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const text = new TextDecoder().decode(doctor.stdout) +
          new TextDecoder().decode(doctor.stderr);
        assert.equal(doctor.code, 0, text);
        assert.match(text, /Verdict: /);
      });
    });

    await t.step(
      "CA-signed with router.tls.ca: the probe trusts the CA; so does fetch",
      async () => {
        const tls = await caSigned(await Deno.makeTempDir({ dir }));
        await withTlsLauncher(modelDir, tls, async (router) => {
          const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(tls.ca)] });
          try {
            const response = await fetch(`${router}/v2/health/ready`, { client });
            assert.equal(response.status, 200);
            assert.equal((await response.json()).ready, true);
          } finally {
            client.close();
          }
        });
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(modelDir, { recursive: true });
  }
});
