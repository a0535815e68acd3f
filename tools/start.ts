// deno-lint-ignore-file no-console
/**
 * @module `deno task start`: the local pool launcher. Uses the configured model (or
 * generates the demo model into the default demo directory), starts N backends and the
 * router as supervised child processes on loopback (`pool/local_pool.ts`: a child that
 * exits is restarted with backoff), prints what is where, and stops every child on
 * Ctrl-C / SIGTERM.
 */
import { type Config, ConfigError, DurationSchema } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { parseCli } from "./cli/cli_args.ts";
import { banner, certificateNote } from "./pool/banner.ts";
import { createLocalPool, type LocalPool, type PoolStatus } from "./pool/local_pool.ts";
import { DEFAULT_MODEL_DIR, ModelSetupError, prepareModel } from "./pool/model_setup.ts";
import {
  ADMIN_TOKEN_FILE,
  INTERNAL_TOKEN_FILE,
  randomToken,
  writeTokenFile,
} from "./token_files.ts";

const launched = performance.now();
const { values } = parseCli({
  name: "deno task start",
  summary: "Starts the router and N backends on loopback with the configured model (the demo\n" +
    `model is generated into ${DEFAULT_MODEL_DIR} on first start) and keeps them running: a\n` +
    "child that exits is restarted with exponential backoff. Ctrl-C / SIGTERM stops all.",
  options: {
    config: {
      type: "string",
      value: "<file>",
      description: "YAML/JSON config (or SWITCHYARD_CONFIG)",
    },
    backends: { type: "string", value: "<n>", description: "backend processes (pool.backends)" },
    demo: {
      type: "boolean",
      description: "generate the demo model into model.dir even when it is not the default",
    },
    "inject-cold-start": {
      type: "string",
      value: "<time>",
      description: "bench/testing: wait this long before spawning each backend the local\n" +
        "scaler starts (an image pull on a GPU host), e.g. 20s",
    },
    "status-file": {
      type: "string",
      value: "<path>",
      description: "keep a JSON file of the launcher's pid and each child's URL, pid, restarts",
    },
  },
  epilog: [
    "Any config field can be overridden as SWITCHYARD_<SECTION>__<FIELD>, e.g.",
    "SWITCHYARD_ROUTER__PORT=8081 SWITCHYARD_MODEL__DIR=models/mine deno task start",
  ],
});

const log = (line: string) => console.log(`[start] ${line}`);
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

let manifest;
try {
  manifest = await prepareModel(config.model.dir, {
    demo: values.demo === true,
    source: env["SWITCHYARD_MODEL__DIR"] !== undefined
      ? "SWITCHYARD_MODEL__DIR"
      : configPath
      ? `config file "${configPath}"`
      : undefined,
    log,
  });
} catch (error) {
  if (!(error instanceof ModelSetupError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}

let injectedColdStartMs: number | undefined;
if (values["inject-cold-start"] !== undefined) {
  const parsed = DurationSchema.safeParse(values["inject-cold-start"]);
  if (!parsed.success) {
    console.error(
      `Cannot start: --inject-cold-start: "${
        values["inject-cold-start"]
      }" is not a duration (e.g. 20s)`,
    );
    Deno.exit(1);
  }
  injectedColdStartMs = parsed.data;
  log(`bench/testing: backends the local scaler starts wait ${injectedColdStartMs} ms first`);
}

// A random internal token unless the operator set one: backends refuse anyone else.
// Written to a 0600 file so a local Prometheus can scrape the backends' /metrics.
const internalToken = config.auth.internal_token ?? randomToken();
if (config.auth.internal_token === undefined) {
  await writeTokenFile(INTERNAL_TOKEN_FILE, internalToken);
}
// A random admin token unless the operator set one, in a 0600 file for `deno task logs`
// and the admin API; only the router gets it, and it is never printed.
const adminToken = config.auth.admin_token ?? randomToken();
if (config.auth.admin_token === undefined) await writeTokenFile(ADMIN_TOKEN_FILE, adminToken);

// Status writes are chained so two quick changes never interleave on the temporary file.
let statusWrites = Promise.resolve();
function writeStatus(status: PoolStatus): void {
  const path = values["status-file"];
  if (path === undefined) return;
  const text = JSON.stringify({ launcher: Deno.pid, ...status }, null, 2) + "\n";
  statusWrites = statusWrites
    .then(async () => {
      await Deno.writeTextFile(`${path}.tmp`, text);
      await Deno.rename(`${path}.tmp`, path); // readers never see half a file
    })
    .catch((error) => log(`Cannot write the status file: ${(error as Error).message}`));
}

const pool: LocalPool = createLocalPool({
  config,
  env: {
    ...env,
    ...(configPath ? { SWITCHYARD_CONFIG: configPath } : {}),
    SWITCHYARD_AUTH__INTERNAL_TOKEN: internalToken,
    // State in memory: a restarted router must keep steering its backends (plan calls carry
    // the pool id, shared/plan_owner.ts), so the launcher names the pool for its lifetime.
    ...(config.state.kv === ":memory:" && config.state.pool_id === undefined
      ? { SWITCHYARD_STATE__POOL_ID: `pool-${crypto.randomUUID().slice(0, 8)}` }
      : {}),
  },
  internalToken,
  adminToken,
  log,
  onChange: writeStatus,
  ...(injectedColdStartMs === undefined ? {} : { injectedColdStartMs }),
});
let stopping = false;
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log("stopping every child…");
  await pool.stop(); // also while starting: no child outlives the launcher
  const restarts = [pool.status().router, ...pool.status().backends]
    .filter((child) => child.restarts > 0)
    .map((child) => `${child.name} ${child.restarts}`);
  log(`stopped${restarts.length ? ` (restarts: ${restarts.join(", ")})` : ""}`);
  Deno.exit(code);
}
Deno.addSignalListener("SIGINT", () => void stopAll(0));
Deno.addSignalListener("SIGTERM", () => void stopAll(0));

try {
  await pool.start();
} catch (error) {
  if (stopping) await new Promise(() => {}); // a signal stopped the start: stopAll exits
  console.error(`Cannot start the pool: ${(error as Error).message}`);
  Deno.exit(1);
}
if (stopping) await new Promise(() => {});

const tls = config.router.tls;
console.log(`
${
  banner({
    manifest,
    status: pool.status(),
    seconds: (performance.now() - launched) / 1000,
    adminToken: config.auth.admin_token === undefined
      ? `${ADMIN_TOKEN_FILE}, mode 0600`
      : "auth.admin_token",
    ...(values.config ? { configArg: values.config } : {}),
    ...(tls ? { trustFile: tls.ca ?? tls.cert } : {}),
    ...(tls
      ? certificateNote(Deno.readTextFileSync(tls.cert), new URL(pool.routerUrl).hostname)
      : {}),
  })
}
`);
