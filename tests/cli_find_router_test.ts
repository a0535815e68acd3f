/**
 * The CLIs that talk to a router find it from the same config and env as
 * `deno task start`, and when nothing answers there they say which URL they tried,
 * where it came from and how to pass another (exit 1).
 */
import assert from "node:assert/strict";
import { freePort } from "../tools/pool/processes.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("doctor, advise and logs name the URL they tried and how to pass another", async () => {
  const port = freePort(); // nothing listens there
  for (const args of [["doctor"], ["advise"], ["logs", '{service="router"}']]) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["task", ...args],
      cwd: ROOT,
      env: {
        SWITCHYARD_ROUTER__PORT: String(port),
        SWITCHYARD_AUTH__ADMIN_TOKEN: "test-admin-token-0123456789",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 1, `${args[0]}: ${stderr}`);
    assert.ok(
      stderr.includes(
        `the router at http://localhost:${port} (from SWITCHYARD_ROUTER__PORT) is unreachable`,
      ),
      `${args[0]}: ${stderr}`,
    );
    assert.match(stderr, /Pass its URL with --url, or the config it runs with/);
  }
});
