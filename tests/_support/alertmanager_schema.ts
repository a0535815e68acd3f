/**
 * @module Alertmanager's webhook body (version 4) and `postableAlert`, as zod schemas
 * written from Alertmanager's documentation (the `webhook_config` payload: `version`,
 * `groupKey`, `truncatedAlerts`, `status`, `receiver`, `groupLabels`, `commonLabels`,
 * `commonAnnotations`, `externalURL`, `alerts[]` of `status`, `labels`, `annotations`,
 * `startsAt`, `endsAt`, `generatorURL`, `fingerprint`) and its v2 OpenAPI (`labels`
 * required, the rest optional). Strict: an extra or missing field fails. Tests check
 * what Switchyard sends, and what a real Alertmanager sends, against them.
 */
import { z } from "zod";

const labelSet = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string());
const time = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);

/** One alert of a webhook body. */
export const WebhookAlertSchema = z.strictObject({
  status: z.enum(["firing", "resolved"]),
  labels: labelSet,
  annotations: z.record(z.string(), z.string()),
  startsAt: time,
  endsAt: time,
  generatorURL: z.string(),
  fingerprint: z.string().regex(/^[0-9a-f]{16}$/),
});

/** The webhook body, version 4. */
export const WebhookV4Schema = z.strictObject({
  version: z.literal("4"),
  groupKey: z.string().min(1),
  truncatedAlerts: z.number().int().min(0),
  status: z.enum(["firing", "resolved"]),
  receiver: z.string().min(1),
  groupLabels: labelSet,
  commonLabels: labelSet,
  commonAnnotations: z.record(z.string(), z.string()),
  externalURL: z.string(),
  alerts: z.array(WebhookAlertSchema).min(1),
});

/** `POST /api/v2/alerts` body. */
export const PostableAlertsSchema = z.array(z.strictObject({
  labels: labelSet.refine((labels) => Object.keys(labels).length > 0, "labels: empty"),
  annotations: z.record(z.string(), z.string()).optional(),
  startsAt: time.optional(),
  endsAt: time.optional(),
  generatorURL: z.string().url().optional(),
}));
export type WebhookV4 = z.infer<typeof WebhookV4Schema>;
