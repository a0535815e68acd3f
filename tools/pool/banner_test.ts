import assert from "node:assert/strict";
import { banner, certificateNote } from "./banner.ts";

const MANIFEST = {
  name: "demo-moe",
  layers: 2,
  experts: 32,
  top_k: 2,
  d_model: 256,
} as Parameters<typeof banner>[0]["manifest"];

const STATUS = {
  router: { name: "router", url: "https://localhost:8443", pid: 3, restarts: 0 },
  backends: [{ name: "backend-1", url: "http://127.0.0.1:9001", pid: 1, restarts: 0 }],
};

Deno.test("banner() shows the router URL, the README's command form and the curl trust file", () => {
  const text = banner({
    manifest: MANIFEST,
    status: STATUS,
    seconds: 6.62,
    adminToken: "data/admin_token, mode 0600",
    configArg: "my.yaml",
    trustFile: "cert.pem",
  });
  assert.match(text, /^Switchyard is up after 6\.6 s — model "demo-moe": 2 layers × 32 experts/);
  assert.match(text, /\n {2}router {4}https:\/\/localhost:8443 {3}\(public: OIP v2/);
  assert.match(text, /curl -s --cacert cert\.pem https:\/\/localhost:8443\/v2\/models\/demo-moe/);
  assert.match(text, /npx -y deno@2\.9\.6 task traffic --mix skewed --config my\.yaml/);
  assert.match(text, /npx -y deno@2\.9\.6 task doctor --config my\.yaml/);
});

Deno.test("certificateNote() speaks up only when the certificate does not name the host", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const make = async (cn: string) => {
      const output = await new Deno.Command("openssl", {
        args: ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", `/CN=${cn}`]
          .concat(["-keyout", `${dir}/k.pem`, "-out", `${dir}/c.pem`]),
        stdout: "null",
        stderr: "null",
      }).output();
      assert.equal(output.code, 0);
      return await Deno.readTextFile(`${dir}/c.pem`);
    };
    assert.deepEqual(certificateNote(await make("localhost"), "localhost"), {});
    const note = certificateNote(await make("switchyard.example.com"), "localhost");
    assert.match(note.certificateNote!, /switchyard\.example\.com, not "localhost"/);
    assert.deepEqual(certificateNote("not a certificate", "localhost"), {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
