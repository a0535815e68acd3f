/**
 * @module Pure: reads samples back out of Prometheus text exposition (format 0.0.4), for
 * tests and tools that check what `/metrics` serves. Handles the subset prom-client
 * writes: `# HELP`/`# TYPE` comments, `name{label="value",…} value` lines, escaped
 * label values. Not a general parser (no timestamps, no exemplars).
 */

/** One sample line. */
export interface ExpositionSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Samples, `# TYPE` per metric family and `# HELP` per metric family. */
export interface Exposition {
  samples: ExpositionSample[];
  types: Map<string, string>;
  help: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(value: string): string {
  return value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

function parseValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/** Parses exposition text; throws a SyntaxError naming the first bad line. */
export function parseExposition(text: string): Exposition {
  const result: Exposition = { samples: [], types: new Map(), help: new Map() };
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const [, keyword, name, ...rest] = line.split(" ");
      if (keyword === "TYPE" && name) result.types.set(name, rest.join(" "));
      if (keyword === "HELP" && name) result.help.set(name, rest.join(" "));
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) {
      throw new SyntaxError(`Cannot parse exposition: line ${i + 1} is not a sample: ${line}`);
    }
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(LABEL)) labels[key!] = unescape(value!);
    result.samples.push({ name: match[1]!, labels, value: parseValue(match[3]!) });
  }
  return result;
}

/** Samples of `name` whose labels include every entry of `labels`. */
export function findSamples(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): ExpositionSample[] {
  return exposition.samples.filter((sample) =>
    sample.name === name &&
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value)
  );
}

/** Sum of the values of {@linkcode findSamples}. */
export function sumSamples(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number {
  return findSamples(exposition, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}
