// deno-lint-ignore-file no-console
/**
 * @module `deno task edge`: the edge entry (`router/edge.ts`, same permissions: net + env)
 * served on `Deno.serve`, listening where `--port` and `--host` say (default `router.port`
 * and `router.host`). `deno serve … router/edge.ts` cannot honour flags given after the
 * script, which is where `deno task edge --port N` puts them. The entry is imported only
 * after the flags parsed, so `--help` and a bad flag start nothing.
 */
import { parseArgs } from "node:util";

const HELP = `Usage: deno task edge [options]

Serves the edge entry (router/edge.ts) with only net + env permissions; config from
SWITCHYARD_* variables. SWITCHYARD_STATE__KV must name the KV the pool's other routers share
(a KV Connect URL), or :memory: for a router that runs alone.

Options:
  --port <n>     port to listen on (default: router.port, 8080)
  --host <name>  address to listen on (default: router.host)
  -h, --help     show this help and exit`;

function fail(message: string): never {
  console.error(`${message} (see deno task edge --help)`);
  Deno.exit(2);
}

let values: { port?: string; host?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    args: Deno.args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  console.log(HELP);
  Deno.exit(0);
}
if (values.port !== undefined && !/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
  fail(`Cannot start the edge entry: --port must be an integer 0–65535, got "${values.port}"`);
}
const { default: edge, edgeListen } = await import("./edge.ts");
Deno.serve({
  port: values.port === undefined ? edgeListen.port : Number(values.port),
  hostname: values.host ?? edgeListen.host,
}, edge.fetch);
