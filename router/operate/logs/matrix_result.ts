/**
 * @module Loki's `query_range` answer for metric queries:
 * `{status: "success", data: {resultType: "matrix", result: [{metric, values}]}}`, each
 * value `[<unix seconds, ms precision, as a number>, "<sample value as a string>"]`, and
 * the number formatting Loki uses (Go's shortest `'f'` form: no exponent).
 */

/** One series of a matrix. */
export interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

/** Loki's `query_range` body for a metric query. */
export interface MatrixResponse {
  status: "success";
  data: { resultType: "matrix"; result: MatrixSeries[] };
  warnings?: string[];
}

/** A sample value as Loki writes it: shortest round-trip digits, never an exponent. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  const text = String(value);
  const exp = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exp) return text;
  const [, sign, lead, frac = "", power] = exp;
  const digits = lead! + frac;
  const point = 1 + Number(power);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  return `${sign}${digits.padEnd(point, "0")}`;
}

/** `labels.Compare` of Prometheus: label pairs sorted by name, compared in order. */
export function compareLabels(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): number {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const [na, nb] = [ka[i]!, kb[i]!];
    if (na !== nb) return na < nb ? -1 : 1;
    const [va, vb] = [a[na]!, b[nb]!];
    if (va !== vb) return va < vb ? -1 : 1;
  }
  return ka.length - kb.length;
}
