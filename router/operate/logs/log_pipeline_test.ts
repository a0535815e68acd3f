import assert from "node:assert/strict";
import { compileQuery } from "./log_pipeline.ts";
import { parseLogQL } from "./logql_parser.ts";
import { jsonLabels } from "./json_labels.ts";

const ROUTER = { service: "router", level: "info" };
const BACKEND = { service: "backend", backend: "backend-1", level: "warn" };
const REQUEST = JSON.stringify({
  ts: "2024-05-01T10:00:01.000Z",
  level: "info",
  msg: "request",
  service: "router",
  request_id: "req-1",
  backend: "backend-2",
  ms: 12.5,
  status: 503,
  ok: false,
  detail: { queue: { rows: 7 }, "hit-rate": 0.5 },
  experts: [1, 2],
  note: null,
});

function run(query: string, line: string, labels: Record<string, string>) {
  const compiled = compileQuery(parseLogQL(query));
  return compiled.matchesStream(labels) ? compiled.process(line, labels) : "not selected";
}

Deno.test("stream selector matchers: = != =~ (anchored) !~, unset labels read as empty", () => {
  const selected = (query: string, labels: Record<string, string>) =>
    compileQuery(parseLogQL(query)).matchesStream(labels);
  assert.equal(selected('{service="router"}', ROUTER), true);
  assert.equal(selected('{service="router"}', BACKEND), false);
  assert.equal(selected('{service="backend", backend!="backend-2"}', BACKEND), true);
  assert.equal(selected('{backend=~"backend-[0-9]"}', BACKEND), true);
  assert.equal(selected('{backend=~"backend"}', BACKEND), false, "regex matchers are anchored");
  assert.equal(selected('{service=~".+", backend!~"backend-1"}', BACKEND), false);
  assert.equal(
    selected('{service=~".+", backend=""}', ROUTER),
    true,
    "router lines have no backend",
  );
  assert.equal(selected('{service=~".+", backend!=""}', ROUTER), false);
});

Deno.test("line filters: contains, not contains, regex search, negated regex, or, chains", () => {
  const kept = (query: string) => run(query, "GET /v2/models 503 Backend Down", ROUTER) !== null;
  assert.equal(kept('{service="router"} |= "503"'), true);
  assert.equal(kept('{service="router"} |= "504"'), false);
  assert.equal(kept('{service="router"} != "503"'), false);
  assert.equal(kept('{service="router"} != "504"'), true);
  assert.equal(kept('{service="router"} |~ "5[0-9]{2}"'), true);
  assert.equal(kept('{service="router"} |~ "down"'), false, "case-sensitive by default");
  assert.equal(kept('{service="router"} |~ "(?i)down"'), true, "(?i) turns on case-insensitivity");
  assert.equal(kept('{service="router"} !~ "^GET"'), false);
  assert.equal(kept('{service="router"} |= "404" or "503"'), true);
  assert.equal(kept('{service="router"} != "404" or "503"'), false, "negated or drops either");
  assert.equal(kept('{service="router"} |= "GET" |= "models" != "POST"'), true);
  assert.equal(kept('{service="router"} |= "GET" |= "POST"'), false);
});

Deno.test("json extracts like Loki: flattened, sanitised, _extracted on clashes, arrays/null skipped", () => {
  assert.deepEqual(jsonLabels(REQUEST, ROUTER), {
    ts: "2024-05-01T10:00:01.000Z",
    level_extracted: "info",
    msg: "request",
    service_extracted: "router",
    request_id: "req-1",
    backend: "backend-2",
    ms: "12.5",
    status: "503",
    ok: "false",
    detail_queue_rows: "7",
    detail_hit_rate: "0.5",
  });
  assert.deepEqual(jsonLabels("not json", ROUTER).__error__, "JSONParserErr");
  assert.deepEqual(jsonLabels('{"1st":1}', {}), { _1st: "1" });
});

Deno.test("label filters after json: strings, numbers, and/or, result labels", () => {
  const result = run(
    '{service="router"} | json | status >= 500 and request_id=~"req-.*"',
    REQUEST,
    ROUTER,
  );
  assert.ok(result !== null && result !== "not selected");
  assert.equal(result.line, REQUEST);
  assert.equal(result.labels["status"], "503");
  assert.equal(result.labels["service"], "router");
  assert.equal(result.labels["detail_queue_rows"], "7");
  const kept = (filter: string) =>
    run(`{service="router"} | json | ${filter}`, REQUEST, ROUTER) !== null;
  assert.equal(kept("status == 503"), true);
  assert.equal(kept("status != 503"), false);
  assert.equal(kept("ms > 12.5"), false);
  assert.equal(kept("ms >= 12.5"), true);
  assert.equal(kept("ms < 13"), true);
  assert.equal(kept("ms <= 12"), false);
  assert.equal(kept('backend="backend-2"'), true);
  assert.equal(kept('backend!="backend-2"'), false);
  assert.equal(kept('level="info"'), true, "the stream label");
  assert.equal(kept('level_extracted="info"'), true);
  assert.equal(kept("status < 500 or ms > 10"), true);
  assert.equal(kept("status < 500 and ms > 10"), false);
  assert.equal(kept("status < 500, ms > 10"), false, "a comma means and");
  assert.equal(kept('missing=""'), true, "an unset label reads as empty");
  assert.equal(kept("missing > 1"), false, "a numeric filter drops lines without the label");
});

Deno.test("a numeric filter on a non-number keeps the line with __error__, like Loki", () => {
  const result = run('{service="router"} | json | request_id > 1', REQUEST, ROUTER);
  assert.ok(result !== null && result !== "not selected");
  assert.equal(result.labels["__error__"], "LabelFilterErr");
  assert.equal(
    run('{service="router"} | json | request_id > 1 | __error__=""', REQUEST, ROUTER),
    null,
  );
});

Deno.test("line_format rewrites the line; later filters see the new line; unset labels are empty", () => {
  const result = run(
    '{service="router"} | json | line_format "{{.request_id}} {{.status}} {{.nope}}|{{ .detail_queue_rows }}"',
    REQUEST,
    ROUTER,
  );
  assert.ok(result !== null && result !== "not selected");
  assert.equal(result.line, "req-1 503 |7");
  assert.equal(
    run('{service="router"} | json | line_format "{{.msg}}" |= "service"', REQUEST, ROUTER),
    null,
    "the filter runs on the formatted line",
  );
  const leading = compileQuery(parseLogQL('{service="router"} |= "x" | json |= "y"'));
  assert.equal(leading.lineMayMatch("x only"), true, "only filters before json are pre-checked");
  assert.equal(leading.lineMayMatch("y only"), false);
});

Deno.test("json on a non-JSON line keeps it with __error__=JSONParserErr", () => {
  const result = run('{service="router"} | json', "plain text", ROUTER);
  assert.ok(result !== null && result !== "not selected");
  assert.equal(result.labels["__error__"], "JSONParserErr");
  assert.equal(run('{service="router"} | json | __error__=""', "plain text", ROUTER), null);
});
