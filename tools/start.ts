// deno-lint-ignore-file no-console
/**
 * @module `deno task start`: the local pool launcher. Generates the demo model if it is
 * missing, starts N backends and the router as child processes on loopback, prints
 * what is where, and stops every child on Ctrl-C / SIGTERM.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Config, ConfigError } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { generateModel } from "./model/generate.ts";
import {
  ADMIN_TOKEN_FILE,
  INTERNAL_TOKEN_FILE,
  randomToken,
  writeTokenFile,
} from "./token_files.ts";
import { type PoolProcess, startProcess } from "./pool/processes.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { config: { type: "string" }, backends: { type: "string" } },
});
const env = Deno.env.toObject();
if (values.backends) env["SWITCHYARD_POOL__BACKENDS"] = values.backends;
const configPath = values.config ?? env["SWITCHYARD_CONFIG"];

let config: Config;
try {
  config = await loadConfig(Deno.args, env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

if (!existsSync(join(config.model.dir, "moe.json"))) {
  console.log(`Generating the demo model into ${config.model.dir} (first start only)…`);
  const started = performance.now();
  await generateModel(config.model.dir, {});
  console.log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
const manifest = JSON.parse(await Deno.readTextFile(join(config.model.dir, "moe.json")));

// A random internal token unless the operator set one: backends refuse anyone else.
// Written to a 0600 file so a local Prometheus can scrape the backends' /metrics.
const internalToken = config.auth.internal_token ?? randomToken();
if (config.auth.internal_token === undefined) {
  await writeTokenFile(INTERNAL_TOKEN_FILE, internalToken);
}
const childEnv = {
  ...env,
  ...(configPath ? { SWITCHYARD_CONFIG: configPath } : {}),
  SWITCHYARD_AUTH__INTERNAL_TOKEN: internalToken,
};

// A random admin token unless the operator set one, in a 0600 file for `deno task logs`
// and the admin API; only the router gets it, and it is never printed.
const adminToken = config.auth.admin_token ?? randomToken();
if (config.auth.admin_token === undefined) await writeTokenFile(ADMIN_TOKEN_FILE, adminToken);

const children: PoolProcess[] = [];
let stopping = false;
async function stopAll(code: number): Promise<never> {
  stopping = true;
  for (const process of children) {
    try {
      process.child.kill("SIGTERM");
    } catch { /* already gone */ }
  }
  await Promise.allSettled(children.map((process) => process.child.status));
  Deno.exit(code);
}
Deno.addSignalListener("SIGINT", () => void stopAll(0));
Deno.addSignalListener("SIGTERM", () => void stopAll(0));

async function start(
  script: string,
  url: string,
  extraEnv: Record<string, string>,
): Promise<PoolProcess> {
  try {
    const process = await startProcess(script, {
      url,
      token: internalToken,
      env: { ...childEnv, ...extraEnv },
      stdout: "inherit",
    });
    children.push(process);
    return process;
  } catch (error) {
    console.error(`${script} did not start: ${(error as Error).message}`);
    return await stopAll(1);
  }
}

const backendUrls = Array.from(
  { length: config.pool.backends },
  (_, i) => `http://127.0.0.1:${config.pool.base_port + i}`,
);
await Promise.all(backendUrls.map((url, i) =>
  start("gpu-backend/main.ts", url, {
    SWITCHYARD_BACKEND__HOST: "127.0.0.1",
    SWITCHYARD_BACKEND__PORT: String(config.pool.base_port + i),
    SWITCHYARD_BACKEND__ID: `backend-${i + 1}`,
  })
));
const scheme = config.router.tls ? "https" : "http";
const routerUrl = `${scheme}://127.0.0.1:${config.router.port}`;
await start("router/main.ts", routerUrl, {
  SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backendUrls),
  SWITCHYARD_AUTH__ADMIN_TOKEN: adminToken,
});

console.log(`
Switchyard is up — model "${manifest.name}": ${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, d_model ${manifest.d_model}
  router    ${routerUrl}   (public: OIP v2 at /v2/models/${manifest.name}/infer)
${backendUrls.map((url, i) => `  backend-${i + 1} ${url}   (internal, loopback only)`).join("\n")}
  dashboard ${routerUrl}/dashboard   (expert-load heatmaps, node resources, alerts, plan)
  metrics   ${routerUrl}/metrics   (Prometheus: deploy/prometheus/prometheus.yml)
Try:
  curl -s ${routerUrl}/v2/models/${manifest.name}
  deno task logs '{service="router"}'   (admin token: ${
  config.auth.admin_token === undefined ? `${ADMIN_TOKEN_FILE}, mode 0600` : "auth.admin_token"
})
Ctrl-C stops everything.
`);

for (const { child } of children) {
  child.status.then((status) => {
    if (!stopping) {
      console.error(`a child process exited (code ${status.code}); stopping the pool`);
      void stopAll(1);
    }
  });
}
