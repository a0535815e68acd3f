/** @module Durations in configuration and API input: `250ms`, `60s`, `5m`, `1h`, `7d` or ms. */
import { z } from "zod";

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration such as `60s`, `250ms`, `5m` or a number of milliseconds, resolved to ms. */
export const DurationSchema = z.union([
  z.number().nonnegative(),
  z.string().regex(DURATION, 'must look like "250ms", "60s", "5m", "1h" or "7d"').transform(
    (text) => {
      const [, value, unit] = DURATION.exec(text)!;
      return Number(value) * UNIT_MS[unit as keyof typeof UNIT_MS];
    },
  ),
]);
