/** Every BackendSource: two backends in, the same two URLs out; one gone, one left. */
import assert from "node:assert/strict";
import { BackendRegistry } from "./backend_registry.ts";
import { type BackendSource, staticSource } from "./backend_source.ts";
import { dnsSource, type Resolve } from "./dns_source.ts";

const clock = { now: () => 1000 };

/** A source over `hosts` (ip → port) for each kind. */
const SOURCES: Record<string, (hosts: Map<string, number>) => Promise<BackendSource>> = {
  static: (hosts) =>
    Promise.resolve(staticSource([...hosts].map(([ip, port]) => `http://${ip}:${port}/`))),
  "dns A": (hosts) => {
    const resolve: Resolve = (name, type) => {
      assert.deepEqual([name, type], ["pool.test", "A"]);
      return Promise.resolve([...hosts.keys()]);
    };
    return Promise.resolve(
      dnsSource({ name: "pool.test", record: "A", port: 9001, scheme: "http", resolve }),
    );
  },
  "dns SRV": (hosts) => {
    const targets = new Map([...hosts].map(([ip, port], i) => [`b${i}.pool.test`, { ip, port }]));
    const resolve: Resolve = (name, type) => {
      if (type === "SRV") {
        return Promise.resolve([...targets].map(([target, { port }]) => ({
          priority: 0,
          weight: 1,
          port,
          target: `${target}.`,
        })));
      }
      const ip = targets.get(name)?.ip;
      if (type === "A" && ip) return Promise.resolve([ip]);
      return Promise.reject(new Deno.errors.NotFound(`no ${type} for ${name}`));
    };
    return Promise.resolve(
      dnsSource({ name: "_http._tcp.pool.test", record: "SRV", port: 1, scheme: "http", resolve }),
    );
  },
  register: async (hosts) => {
    const kv = await Deno.openKv(":memory:");
    const registry = new BackendRegistry(kv, { clock, ttlMs: 15_000 });
    for (const [ip, port] of hosts) await registry.announce(`http://${ip}:${port}`);
    const source = registry.source();
    return {
      name: source.name,
      list: () => source.list().finally(() => kv.close()),
    };
  },
};

for (const [name, make] of Object.entries(SOURCES)) {
  Deno.test(`${name} BackendSource lists every backend once, sorted`, async () => {
    const two = await make(new Map([["10.0.0.3", 9001], ["10.0.0.2", 9001]]));
    assert.deepEqual(await two.list(), ["http://10.0.0.2:9001", "http://10.0.0.3:9001"]);
    const one = await make(new Map([["10.0.0.2", 9001]]));
    assert.deepEqual(await one.list(), ["http://10.0.0.2:9001"]);
  });
}

Deno.test("dnsSource: NXDOMAIN is an empty pool; other failures throw; IPv6 gets brackets", async () => {
  const answers: Record<string, () => Promise<string[]>> = {
    gone: () => Promise.reject(new Deno.errors.NotFound("no records")),
    broken: () => Promise.reject(new Error("connection refused")),
    v6: () => Promise.resolve(["fd00::5"]),
  };
  const source = (name: string, record: "A" | "AAAA" = "A") =>
    dnsSource({ name, record, port: 9001, scheme: "https", resolve: (n) => answers[n]!() });
  assert.deepEqual(await source("gone").list(), []);
  await assert.rejects(source("broken").list(), /Cannot resolve A "broken": connection refused/);
  assert.deepEqual(await source("v6", "AAAA").list(), ["https://[fd00::5]:9001"]);
});

Deno.test("BackendRegistry: an announcement counts for one TTL; withdraw removes it at once", async () => {
  const kv = await Deno.openKv(":memory:");
  let now = 0;
  const registry = new BackendRegistry(kv, { clock: { now: () => now }, ttlMs: 15_000 });
  await registry.announce("http://10.0.0.2:9001/", "backend-1");
  await registry.announce("http://10.0.0.3:9001");
  now = 10_000;
  await registry.announce("http://10.0.0.3:9001");
  now = 15_000;
  assert.deepEqual(await registry.source().list(), ["http://10.0.0.3:9001"]);
  await registry.withdraw("http://10.0.0.3:9001");
  assert.deepEqual(await registry.source().list(), []);
  kv.close();
});
