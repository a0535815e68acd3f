/**
 * @module The launcher's "Switchyard is up" banner: what runs where and what to try
 * next, in the same command form as the README (`npx -y deno@2.9.6 task …`; inside a task
 * `deno` is that same copy) and the same router host name as the router's own log line.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";
import type { PoolStatus } from "./local_pool.ts";

/** The command prefix the README and the banner use. */
export const TASK = "npx -y deno@2.9.6 task";

/** What {@linkcode banner} prints. */
export interface BannerInput {
  manifest: ModelManifest;
  status: PoolStatus;
  /** Seconds from launch to ready. */
  seconds: number;
  /** Where the admin token is (a file path) or `auth.admin_token` when configured. */
  adminToken: string;
  /** `--config <file>` the pool was started with, repeated on the CLI examples. */
  configArg?: string;
  /** For HTTPS: the PEM file clients trust (`router.tls.ca` or the certificate). */
  trustFile?: string;
  /** For HTTPS: a note when the certificate does not name the router's host. */
  certificateNote?: string;
}

/** The banner text (no trailing newline). */
export function banner(input: BannerInput): string {
  const { manifest, status } = input;
  const router = status.router.url;
  const config = input.configArg ? ` --config ${input.configArg}` : "";
  const curlTrust = input.trustFile ? ` --cacert ${input.trustFile}` : "";
  const width = Math.max(9, ...status.backends.map((backend) => backend.name.length));
  const row = (name: string, url: string, note: string) =>
    `  ${name.padEnd(width)} ${url}   (${note})`;
  return [
    `Switchyard is up after ${input.seconds.toFixed(1)} s — model "${manifest.name}": ` +
    `${manifest.layers} layers × ${manifest.experts} experts, top-${manifest.top_k}, ` +
    `d_model ${manifest.d_model}`,
    row("router", router, `public: OIP v2 at /v2/models/${manifest.name}/infer`),
    ...status.backends.map((backend) => row(backend.name, backend.url, "internal, loopback only")),
    row("dashboard", `${router}/dashboard`, "expert-load heatmaps, node resources, alerts, plan"),
    row("metrics", `${router}/metrics`, "Prometheus: deploy/prometheus/prometheus.yml"),
    ...(input.certificateNote ? [`  note: ${input.certificateNote}`] : []),
    "Try:",
    `  curl -s${curlTrust} ${router}/v2/models/${manifest.name}`,
    `  ${TASK} traffic --mix skewed${config}   (a minute of load; watch the dashboard)`,
    `  ${TASK} logs '{service="router"}'${config}   (admin token: ${input.adminToken})`,
    `  ${TASK} doctor${config}`,
    "A child that exits is restarted with backoff; Ctrl-C stops everything.",
  ].join("\n");
}
