/**
 * @module Golden Loki answers, written by hand from Loki's documented semantics for the
 * fixed corpus of `tests/_support/router/log_fixture.ts` (nine lines; T0 = 2024-05-01T10:00:00Z):
 *
 * | ms after T0 | stream                                   | line                                   |
 * | ----------- | ---------------------------------------- | -------------------------------------- |
 * | 0           | service=router level=info                | router listening                        |
 * | 500, 600    | service=backend level=info backend=1, 2  | backend listening (116 bytes each)      |
 * | 1000, 2000  | service=router level=info                | req-1 chat 3.5 ms 200, req-2 code 12.25 ms 200 |
 * | 3000        | service=router level=warn                | req-3 code 40 ms 503                    |
 * | 4000        | service=router level=error               | req-4 math 120 ms 500 "backend exploded" |
 * | 5000        | service=backend level=warn backend-1     | executor slow, detail.layer 1, detail.queue.rows 7 (152 bytes) |
 * | 6000        | service=backend level=error backend-2    | plan switch failed (118 bytes)          |
 *
 * Nothing here runs Switchyard's LogQL code: every expected label, line and number was
 * worked out by hand (the reasoning sits beside each answer). The stand-in Loki answers
 * `query_range` from this table, so a difference between Switchyard's evaluator and
 * these answers fails the contract test, and the forwarding path is checked for sending
 * exactly these parameters.
 *
 * Semantics used: stream results are sorted by their label string, values newest first
 * (`backward`); `| json` adds every field, flattening nested keys with `_` and renaming
 * a key that is a stream label to `<key>_extracted`; `and` binds tighter than `or`;
 * metric steps run from start to end inclusive, each seeing `(t - range, t]`; a matrix
 * timestamp is unix seconds (a number), a value a string; series are sorted by labels.
 */
import { fixtureLine, ns, T0_MS } from "./router/log_fixture.ts";

/** One hand-written answer: the exact parameters Loki gets, and its status and body. */
export interface GoldenAnswer {
  name: string;
  params: Record<string, string>;
  status: 200 | 400;
  /** A JSON body (200) or Loki's plain-text error (400). */
  body: unknown;
}

const T0 = T0_MS / 1000;
const WHOLE = { start: ns(-1000), end: ns(60_000) };
const line = fixtureLine;

/** Labels of the request lines after `| json` (the stream labels plus every field). */
const R2 = {
  backend: "backend-2",
  batches: "1",
  event: "request",
  experts: "0:5,6;1:7,0",
  level: "info",
  level_extracted: "info",
  model: "demo-moe",
  ms: "12.25",
  msg: "request",
  request_id: "req-2",
  request_type: "code",
  rows: "2",
  service: "router",
  service_extracted: "router",
  status: "200",
  ts: "2024-05-01T10:00:02.000Z",
};
const R3 = {
  backend: "backend-1",
  batches: "1",
  event: "request",
  experts: "0:1,5;1:3,7",
  level: "warn",
  level_extracted: "warn",
  model: "demo-moe",
  ms: "40",
  msg: "request",
  request_id: "req-3",
  request_type: "code",
  rows: "2",
  service: "router",
  service_extracted: "router",
  status: "503",
  ts: "2024-05-01T10:00:03.000Z",
};
const R4 = {
  backend: "backend-2",
  batches: "1",
  error: "backend exploded",
  event: "request",
  experts: "0:2,3;1:4,6",
  level: "error",
  level_extracted: "error",
  model: "demo-moe",
  ms: "120",
  msg: "request",
  request_id: "req-4",
  request_type: "math",
  rows: "2",
  service: "router",
  service_extracted: "router",
  status: "500",
  ts: "2024-05-01T10:00:04.000Z",
};

const streams = (result: unknown[]) => ({
  status: "success",
  data: { resultType: "streams", result },
});
const matrix = (result: unknown[]) => ({
  status: "success",
  data: { resultType: "matrix", result },
});
const logParams = (query: string, extra: Record<string, string> = {}) => ({
  query,
  ...WHOLE,
  limit: "100",
  direction: "backward",
  ...extra,
});
const metricParams = (query: string, startMs: number, endMs: number, step: string) => ({
  query,
  start: ns(startMs),
  end: ns(endMs),
  step,
});

/** The golden answers over the fixture corpus. */
export const LOKI_GOLDEN: GoldenAnswer[] = [
  {
    name: "a selector groups lines into streams by their labels, newest first",
    params: logParams('{service="router"}'),
    status: 200,
    body: streams([
      { stream: { level: "error", service: "router" }, values: [[ns(4000), line(4000)]] },
      {
        stream: { level: "info", service: "router" },
        values: [[ns(2000), line(2000)], [ns(1000), line(1000)], [ns(0), line(0)]],
      },
      { stream: { level: "warn", service: "router" }, values: [[ns(3000), line(3000)]] },
    ]),
  },
  {
    name: "backend lines carry the backend label",
    params: logParams('{service="backend", backend="backend-2"}'),
    status: 200,
    body: streams([
      {
        stream: { backend: "backend-2", level: "error", service: "backend" },
        values: [[ns(6000), line(6000)]],
      },
      {
        stream: { backend: "backend-2", level: "info", service: "backend" },
        values: [[ns(600), line(600)]],
      },
    ]),
  },
  {
    name: "limit keeps the newest entries backward",
    params: logParams('{service=~".+"}', { limit: "2" }),
    status: 200,
    body: streams([
      {
        stream: { backend: "backend-1", level: "warn", service: "backend" },
        values: [[ns(5000), line(5000)]],
      },
      {
        stream: { backend: "backend-2", level: "error", service: "backend" },
        values: [[ns(6000), line(6000)]],
      },
    ]),
  },
  {
    name: "limit keeps the oldest entries forward",
    params: logParams('{service=~".+"}', { limit: "3", direction: "forward" }),
    status: 200,
    body: streams([
      {
        stream: { backend: "backend-1", level: "info", service: "backend" },
        values: [[ns(500), line(500)]],
      },
      {
        stream: { backend: "backend-2", level: "info", service: "backend" },
        values: [[ns(600), line(600)]],
      },
      { stream: { level: "info", service: "router" }, values: [[ns(0), line(0)]] },
    ]),
  },
  {
    name: "the range is [start, end)",
    params: logParams('{service=~"router|backend"}', { start: ns(1000), end: ns(3000) }),
    status: 200,
    body: streams([
      {
        stream: { level: "info", service: "router" },
        values: [[ns(2000), line(2000)], [ns(1000), line(1000)]],
      },
    ]),
  },
  {
    // warn/error lines: req-3 (has "backend"), req-4 (has "exploded": dropped),
    // executor slow and plan switch failed (both carry "backend").
    name: "a level regex and two line filters",
    params: logParams('{level=~"warn|error"} |= "backend" != "exploded"'),
    status: 200,
    body: streams([
      {
        stream: { backend: "backend-1", level: "warn", service: "backend" },
        values: [[ns(5000), line(5000)]],
      },
      {
        stream: { backend: "backend-2", level: "error", service: "backend" },
        values: [[ns(6000), line(6000)]],
      },
      { stream: { level: "warn", service: "router" }, values: [[ns(3000), line(3000)]] },
    ]),
  },
  {
    // "router listening" has no status: a numeric filter on a missing label drops it.
    name: "json labels join the stream, a numeric filter and line_format",
    params: logParams(
      '{service="router"} | json | status >= 500 | line_format "{{.request_id}} {{.status}} {{.ms}}"',
    ),
    status: 200,
    body: streams([
      { stream: R3, values: [[ns(3000), "req-3 503 40"]] },
      { stream: R4, values: [[ns(4000), "req-4 500 120"]] },
    ]),
  },
  {
    name: "nested json fields flatten with _, a clashing key gets _extracted",
    params: logParams(
      '{service="backend"} | json | detail_queue_rows > 5 | line_format "{{.backend_extracted}} {{.detail_layer}}"',
    ),
    status: 200,
    body: streams([{
      stream: {
        backend: "backend-1",
        backend_extracted: "backend-1",
        detail_layer: "1",
        detail_queue_rows: "7",
        level: "warn",
        level_extracted: "warn",
        msg: "executor slow",
        service: "backend",
        service_extracted: "backend",
        ts: "2024-05-01T10:00:05.000Z",
      },
      values: [[ns(5000), "backend-1 1"]],
    }]),
  },
  {
    // and binds tighter: math OR (ms > 10 AND status == 200) → req-4 and req-2.
    // (Left to right, (math or ms > 10) and status == 200, would keep req-2 only.)
    name: "and binds tighter than or",
    params: logParams(
      '{service="router"} | json | request_type="math" or ms > 10 and status == 200 | line_format "{{.request_id}}"',
    ),
    status: 200,
    // Sorted by label string: error="backend exploded" (req-4) comes before event= (req-2).
    body: streams([
      { stream: R4, values: [[ns(4000), "req-4"]] },
      { stream: R2, values: [[ns(2000), "req-2"]] },
    ]),
  },
  {
    // Steps 0, 2, 4 s; windows (-2, 0] = listening; (0, 2] = req-1, req-2; (2, 4] = req-3, req-4.
    name: "count_over_time per stream, every step",
    params: metricParams('count_over_time({service="router"}[2s])', 0, 4000, "2"),
    status: 200,
    body: matrix([
      { metric: { level: "error", service: "router" }, values: [[T0 + 4, "1"]] },
      { metric: { level: "info", service: "router" }, values: [[T0, "1"], [T0 + 2, "2"]] },
      { metric: { level: "warn", service: "router" }, values: [[T0 + 4, "1"]] },
    ]),
  },
  {
    // rate = lines / 2 s per stream, then summed per service. Backend lines at 0.5, 0.6
    // (step 2) and 5, 6 (step 6); router at 0 (step 0), 1, 2 (step 2), 3, 4 (step 4).
    name: "sum by (service) of rate",
    params: metricParams('sum by (service) (rate({service=~".+"}[2s]))', 0, 6000, "2"),
    status: 200,
    body: matrix([
      { metric: { service: "backend" }, values: [[T0 + 2, "1"], [T0 + 6, "1"]] },
      {
        metric: { service: "router" },
        values: [[T0, "0.5"], [T0 + 2, "1"], [T0 + 4, "1"]],
      },
    ]),
  },
  {
    // Window (-4 s, 6 s]: backend-1 = 116 + 152 bytes, backend-2 = 116 + 118 bytes.
    name: "sum by (backend) of bytes_over_time",
    params: metricParams(
      'sum by (backend) (bytes_over_time({service="backend"}[10s]))',
      6000,
      6000,
      "1",
    ),
    status: 200,
    body: matrix([
      { metric: { backend: "backend-1" }, values: [[T0 + 6, "268"]] },
      { metric: { backend: "backend-2" }, values: [[T0 + 6, "234"]] },
    ]),
  },
  {
    // "router listening" has no ms: SampleExtractionErr, dropped by __error__="".
    // chat: 3.5; code: 12.25 and 40 → median 26.125; math: 120.
    name: "quantile_over_time of an unwrapped label, by request_type",
    params: metricParams(
      'quantile_over_time(0.5, {service="router"} | json | unwrap ms | __error__="" [10s]) by (request_type)',
      4000,
      4000,
      "1",
    ),
    status: 200,
    body: matrix([
      { metric: { request_type: "chat" }, values: [[T0 + 4, "3.5"]] },
      { metric: { request_type: "code" }, values: [[T0 + 4, "26.125"]] },
      { metric: { request_type: "math" }, values: [[T0 + 4, "120"]] },
    ]),
  },
  {
    // info: (3.5 + 12.25) / 2 = 7.875; warn 40; error 120.
    name: "avg_over_time of an unwrapped label, by level",
    params: metricParams(
      'avg_over_time({service="router"} | json | unwrap ms | __error__="" [10s]) by (level)',
      4000,
      4000,
      "1",
    ),
    status: 200,
    body: matrix([
      { metric: { level: "error" }, values: [[T0 + 4, "120"]] },
      { metric: { level: "info" }, values: [[T0 + 4, "7.875"]] },
      { metric: { level: "warn" }, values: [[T0 + 4, "40"]] },
    ]),
  },
  {
    // Lines per request type up to 4 s: code 2, chat 1, math 1, none (listening) 1.
    name: "topk of sum by request_type",
    params: metricParams(
      'topk(1, sum by (request_type) (count_over_time({service="router"} | json [10s])))',
      4000,
      4000,
      "1",
    ),
    status: 200,
    body: matrix([{ metric: { request_type: "code" }, values: [[T0 + 4, "2"]] }]),
  },
  {
    // Seven streams up to 6 s; lines per stream: router info 3, every other stream 1.
    name: "count, max, min and avg across streams",
    params: metricParams(
      'count(count_over_time({service=~".+"}[10s]))',
      6000,
      6000,
      "1",
    ),
    status: 200,
    body: matrix([{ metric: {}, values: [[T0 + 6, "7"]] }]),
  },
  {
    name: "max across streams",
    params: metricParams('max(count_over_time({service=~".+"}[10s]))', 6000, 6000, "1"),
    status: 200,
    body: matrix([{ metric: {}, values: [[T0 + 6, "3"]] }]),
  },
  {
    name: "min across streams",
    params: metricParams('min(count_over_time({service=~".+"}[10s]))', 6000, 6000, "1"),
    status: 200,
    body: matrix([{ metric: {}, values: [[T0 + 6, "1"]] }]),
  },
  {
    // 9 lines over 7 streams.
    name: "avg across streams",
    params: metricParams('avg(count_over_time({service=~".+"}[10s]))', 6000, 6000, "1"),
    status: 200,
    body: matrix([{ metric: {}, values: [[T0 + 6, "1.2857142857142858"]] }]),
  },
  {
    name: "sum without (level)",
    params: metricParams(
      'sum without (level) (count_over_time({service="backend"}[10s]))',
      6000,
      6000,
      "1",
    ),
    status: 200,
    body: matrix([
      { metric: { backend: "backend-1", service: "backend" }, values: [[T0 + 6, "2"]] },
      { metric: { backend: "backend-2", service: "backend" }, values: [[T0 + 6, "2"]] },
    ]),
  },
  {
    // "router listening" has no ms and nothing filters the error out: Loki refuses.
    name: "an unwrap error that is not filtered fails the query",
    params: metricParams(
      'sum(avg_over_time({service="router"} | json | unwrap ms [10s]))',
      4000,
      4000,
      "1",
    ),
    status: 400,
    body: "pipeline error: 'SampleExtractionErr' for series: " +
      '\'{__error__="SampleExtractionErr", level="info", ' +
      'level_extracted="info", msg="router listening", service="router", ' +
      'service_extracted="router", ts="2024-05-01T10:00:00.000Z", url="http://127.0.0.1:8080"}\'.',
  },
];

/** The golden answer for a request's parameters: every parameter must match exactly. */
export function findGolden(
  answers: GoldenAnswer[],
  params: Record<string, string>,
): GoldenAnswer | undefined {
  return answers.find((answer) => {
    const keys = Object.keys(answer.params);
    return keys.length === Object.keys(params).length &&
      keys.every((key) => params[key] === answer.params[key]);
  });
}
