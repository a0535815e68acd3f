/**
 * @module What Loki's `| json` parser (without arguments) extracts from a line.
 *
 * - Nested objects are flattened with `_`: `{"a":{"b":1}}` → `a_b="1"`.
 * - Keys are sanitised to label names: characters outside `[A-Za-z0-9_]` become `_`, a
 *   leading digit gets a `_` prefix.
 * - Strings are taken as they are, numbers as their JSON text, booleans as
 *   `true`/`false`; `null` and arrays are skipped.
 * - A key that is already a stream label is renamed `<key>_extracted`, so the stream
 *   label keeps its value.
 * - A line that is not a JSON object yields `__error__="JSONParserErr"` and
 *   `__error_details__`, and the line is kept (filter with `| __error__=""`).
 */

/**
 * Labels `| json` adds for `line`, given the stream labels it must not overwrite.
 * `parsed` may carry `JSON.parse(line)` when the caller already has it.
 */
export function jsonLabels(
  line: string,
  streamLabels: Readonly<Record<string, string>>,
  parsed?: { value: unknown },
): Record<string, string> {
  let value: unknown;
  if (parsed) value = parsed.value;
  else {
    try {
      value = JSON.parse(line);
    } catch (error) {
      return { __error__: "JSONParserErr", __error_details__: (error as Error).message };
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { __error__: "JSONParserErr", __error_details__: "the line is not a JSON object" };
  }
  const out: Record<string, string> = {};
  flatten(value as Record<string, unknown>, "", out, streamLabels);
  return out;
}

function flatten(
  object: Record<string, unknown>,
  prefix: string,
  out: Record<string, string>,
  streamLabels: Readonly<Record<string, string>>,
): void {
  for (const [key, value] of Object.entries(object)) {
    const part = sanitizeKey(key, prefix === "");
    if (part === "") continue;
    const name = prefix === "" ? part : `${prefix}_${part}`;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      flatten(value as Record<string, unknown>, name, out, streamLabels);
      continue;
    }
    let text: string;
    if (typeof value === "string") text = value;
    else if (typeof value === "number" || typeof value === "boolean") text = String(value);
    else continue; // null, arrays
    out[Object.hasOwn(streamLabels, name) ? `${name}_extracted` : name] = text;
  }
}

function sanitizeKey(key: string, first: boolean): string {
  const trimmed = key.trim();
  if (trimmed === "") return "";
  const prefixed = first && /^[0-9]/.test(trimmed) ? `_${trimmed}` : trimmed;
  return prefixed.replace(/[^A-Za-z0-9_]/g, "_");
}
