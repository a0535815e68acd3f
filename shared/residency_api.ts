/**
 * @module The backend's residency endpoints, as the router and operators read them:
 * `POST /v2/residency/warm` `{parts}` answers a {@linkcode WarmAnswer}; `GET /v2/residency`
 * a {@linkcode ResidencyStatus}. One schema per answer: the backend builds its answers
 * to these types, the router parses them with these schemas.
 */
import { z } from "zod";

/** What one warm call did with each part asked for (part keys such as `L0/E12`). */
export const WarmAnswerSchema = z.object({
  warmed: z.array(z.string()).default([]),
  already_warm: z.array(z.string()).default([]),
  evicted: z.array(z.string()).default([]),
  skipped: z.array(z.string()).default([]),
});

/** The answer of `POST /v2/residency/warm`. */
export type WarmAnswer = z.infer<typeof WarmAnswerSchema>;

/** Cold starts of one routed expert (loads paid by requests). */
export const ColdStartsSchema = z.object({
  count: z.number().min(0),
  ms_sum: z.number().min(0),
  ms_max: z.number().min(0),
});

/** The answer of `GET /v2/residency`: budget, warm experts and cold starts of a backend. */
export const ResidencyStatusSchema = z.object({
  budget_bytes: z.number().min(0).nullable(),
  used_bytes: z.number().min(0),
  warm: z.array(z.object({
    part: z.string(),
    bytes: z.number().min(0),
    last_used_ms_ago: z.number().min(0),
    pinned: z.boolean(),
  })),
  cold_starts: z.record(z.string(), ColdStartsSchema),
});

/** The answer of `GET /v2/residency`. */
export type ResidencyStatus = z.infer<typeof ResidencyStatusSchema>;
