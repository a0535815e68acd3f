/**
 * @module The `line_format` template subset: literal text and `{{.label}}` substitutions
 * (spaces inside the braces allowed: `{{ .label }}`). A label that is not set renders as
 * the empty string, like Loki (Go's `missingkey=zero` over a string map). Anything else
 * inside `{{ }}` — functions, pipelines, `if`/`range`, `{{-` trim markers — is outside
 * the subset.
 */
import type { TemplatePart } from "./logql_ast.ts";

const ACTION = /\{\{(.*?)\}\}/gs;
const SUBSTITUTION = /^\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*$/;

/** A template action outside the subset; `offset` is where it starts in the template. */
export class TemplateActionError extends Error {
  readonly action: string;
  readonly offset: number;

  constructor(action: string, offset: number) {
    super(`line_format template action "${action}" is not in the supported subset`);
    this.name = "TemplateActionError";
    this.action = action;
    this.offset = offset;
  }
}

/** Splits a template into parts; throws {@linkcode TemplateActionError} outside the subset. */
export function parseLineTemplate(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(ACTION)) {
    const label = SUBSTITUTION.exec(match[1]!)?.[1];
    if (label === undefined) throw new TemplateActionError(match[0], match.index);
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    parts.push({ label });
    last = match.index + match[0].length;
  }
  const rest = template.slice(last);
  const unclosed = rest.indexOf("{{");
  if (unclosed >= 0) throw new TemplateActionError(rest.slice(unclosed), last + unclosed);
  if (rest !== "") parts.push({ text: rest });
  return parts;
}

/** Renders parts with `labels`; unset labels render as `""`. */
export function renderLineTemplate(
  parts: readonly TemplatePart[],
  labels: Readonly<Record<string, string>>,
): string {
  let out = "";
  for (const part of parts) out += "text" in part ? part.text : labels[part.label] ?? "";
  return out;
}
