// deno-lint-ignore-file no-console
/**
 * @module The server side of `bench:conn-cost`: one of the router's HTTP fronts
 * (`--front deno`: `Deno.serve`; `--front node`: `router/serve/front/node_server.ts` with no
 * connection cap) with a handler that answers `/ok` once its body is read, holds every other
 * request unanswered (a request in flight) and reports how many it holds at `GET /held`.
 * Prints its port on stdout, then serves until killed.
 */
import { parseCli } from "../../cli/cli_args.ts";
import { serveNode } from "../../../router/serve/front/node_server.ts";

const { values } = parseCli({
  name: "tools/bench/conn_cost/server.ts",
  summary: "A router HTTP front that holds requests (bench:conn-cost's server).",
  options: {
    front: { type: "string", default: "deno", value: "<deno|node>", description: "HTTP front" },
  },
});
let held = 0;
const never = new Promise<Response>(() => {});
const handler = async (request: Request): Promise<Response> => {
  const path = new URL(request.url).pathname;
  if (path === "/ok") {
    await request.arrayBuffer();
    return new Response("ok");
  }
  if (path === "/held") return new Response(String(held));
  held++;
  return never;
};
let port: number;
if (values.front === "node") {
  const front = await serveNode({
    hostname: "127.0.0.1",
    port: 0,
    maxConnections: 1_000_000,
    headerTimeoutMs: 3_600_000,
    idleTimeoutMs: 3_600_000,
    onError: () => new Response("failed", { status: 500 }),
  }, handler);
  port = front.addr.port;
} else if (values.front === "deno") {
  port = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler).addr.port;
} else {
  throw new RangeError(`Cannot serve: --front must be deno or node, not ${values.front}`);
}
console.log(port);
