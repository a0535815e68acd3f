import assert from "node:assert/strict";
import { join } from "node:path";
import { routerProblem, routerTarget } from "./router_target.ts";

Deno.test("routerTarget() finds the router like deno task start: defaults, env, config file, --url", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const plain = await routerTarget({}, {});
    assert.deepEqual([plain.url, plain.from], ["http://localhost:8080", "the default config"]);

    const env = await routerTarget({}, { SWITCHYARD_ROUTER__PORT: "8081" });
    assert.deepEqual([env.url, env.from], ["http://localhost:8081", "SWITCHYARD_ROUTER__PORT"]);

    const cert = join(dir, "cert.pem");
    await Deno.writeTextFile(cert, "-----BEGIN CERTIFICATE-----\n");
    const file = join(dir, "s.yaml");
    await Deno.writeTextFile(
      file,
      `router: { host: 127.0.0.1, port: 9443, tls: { cert: ${cert}, key: ${cert} } }\n`,
    );
    const fromFile = await routerTarget({ config: file }, {});
    assert.deepEqual([fromFile.url, fromFile.from], [
      "https://127.0.0.1:9443",
      `config file "${file}"`,
    ]);
    const fromEnvFile = await routerTarget({}, { SWITCHYARD_CONFIG: file });
    assert.equal(fromEnvFile.url, "https://127.0.0.1:9443");

    const given = await routerTarget({ url: "http://10.0.0.5:8080/" }, {});
    assert.deepEqual([given.url, given.from], ["http://10.0.0.5:8080", "--url"]);

    await assert.rejects(
      routerTarget({}, {
        SWITCHYARD_ROUTER__TLS__CERT: "/nope.pem",
        SWITCHYARD_ROUTER__TLS__KEY: "k",
      }),
      /Cannot trust the router's certificate: router\.tls\.cert: cannot read "\/nope\.pem"/,
    );
    for (const target of [plain, env, fromFile, fromEnvFile, given]) target.fetch.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("routerProblem() says which URL was tried, from where, and how to pass another", async () => {
  const target = await routerTarget({}, { SWITCHYARD_ROUTER__PORT: "8081" });
  assert.equal(
    routerProblem(target, "ask the doctor", "is unreachable (connection refused)"),
    "Cannot ask the doctor: the router at http://localhost:8081 (from SWITCHYARD_ROUTER__PORT) " +
      "is unreachable (connection refused). Pass its URL with --url, or the config it runs with " +
      "(--config <file>, SWITCHYARD_CONFIG, SWITCHYARD_ROUTER__PORT=<port>)",
  );
  target.fetch.close();
});
