/**
 * @module The log store interface: where `GET /api/logs` gets its answer. Two
 * implementations: {@linkcode LocalLogStore} evaluates the LogQL subset over the local
 * log files, {@linkcode LokiLogStore} forwards to Grafana Loki's `query_range`. Both
 * pass the same contract test (`log_store_contract_test.ts`).
 */
import type { LogQuery, MetricQuery } from "./logql_ast.ts";
import type { QueryRange } from "./query_range_params.ts";
import type { StreamsResponse } from "./streams_result.ts";
import type { MatrixResponse } from "./matrix_result.ts";
import type { MetricRange } from "./metric_eval.ts";

/** A validated log query: the text, its parsed subset form and the range. */
export interface LogQueryRequest {
  /** The LogQL text as the caller sent it (forwarded to Loki unchanged). */
  query: string;
  /** The parsed query (the subset check has passed). */
  parsed: LogQuery;
  range: QueryRange;
}

/** A validated metric query: the text, its parsed subset form and the steps. */
export interface MetricQueryRequest {
  query: string;
  parsed: MetricQuery;
  range: MetricRange;
}

/** Answers log and metric queries in Loki's `query_range` shapes (streams, matrix). */
export interface LogStore {
  /** `local` or `loki`, for logs and the API's `x-switchyard-log-store` header. */
  readonly kind: "local" | "loki";
  queryRange(request: LogQueryRequest): Promise<StreamsResponse>;
  queryMetric(request: MetricQueryRequest): Promise<MatrixResponse>;
}

/**
 * Loki could not answer: `timeout` when it did not answer within `loki.timeout`,
 * `unreachable` when the connection failed, `rejected` when it answered an error
 * (`status` and Loki's own message).
 */
export class LokiQueryError extends Error {
  readonly kind: "timeout" | "unreachable" | "rejected";
  readonly status: number | undefined;

  constructor(kind: "timeout" | "unreachable" | "rejected", message: string, status?: number) {
    super(message);
    this.name = "LokiQueryError";
    this.kind = kind;
    this.status = status;
  }
}
