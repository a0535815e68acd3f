/**
 * @module LogQL string literals and regular expressions: Go-style unquoting (LogQL
 * strings follow Go's `strconv.Unquote`) and RE2 → JavaScript RegExp translation.
 *
 * RE2 and JavaScript agree on the common syntax (classes, alternation, repetition,
 * anchors). Two RE2 habits LogQL users rely on are translated: leading flag groups
 * (`(?i)error`, `(?is)…`) become RegExp flags, and `(?P<name>…)` becomes `(?<name>…)`.
 */

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
};

/**
 * Unquotes a `"…"` (Go escapes) or `` `…` `` (raw) literal. Throws a `SyntaxError`
 * whose `cause` is the offset of the bad escape inside `literal`.
 */
export function unquoteLogQL(literal: string): string {
  if (literal.length >= 2 && literal.startsWith("`") && literal.endsWith("`")) {
    return literal.slice(1, -1);
  }
  if (literal.length < 2 || !literal.startsWith('"') || !literal.endsWith('"')) {
    throw new SyntaxError(`string ${literal} is not quoted`, { cause: 0 });
  }
  let out = "";
  for (let i = 1; i < literal.length - 1; i++) {
    const char = literal[i]!;
    if (char !== "\\") {
      out += char;
      continue;
    }
    const next = literal[i + 1] ?? "";
    const simple = SIMPLE_ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      i += 1;
      continue;
    }
    const hexLength = next === "x" ? 2 : next === "u" ? 4 : next === "U" ? 8 : 0;
    const octal = /^[0-7]{3}$/.test(literal.slice(i + 1, i + 4));
    const digits = octal ? literal.slice(i + 1, i + 4) : literal.slice(i + 2, i + 2 + hexLength);
    if (octal || (hexLength > 0 && new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(digits))) {
      const code = parseInt(digits, octal ? 8 : 16);
      if (code > 0x10ffff) {
        throw new SyntaxError(`invalid escape "\\${next}${digits}"`, { cause: i });
      }
      out += String.fromCodePoint(code);
      i += octal ? 3 : 1 + hexLength;
      continue;
    }
    throw new SyntaxError(`invalid escape "\\${next}"`, { cause: i });
  }
  return out;
}

/**
 * Compiles an RE2-style pattern. `anchored` wraps it in `^(?:…)$` (label matchers match
 * the whole value, as in Prometheus and Loki); line filters search anywhere.
 * Throws `SyntaxError` when the pattern does not compile.
 */
export function compileRegex(pattern: string, anchored: boolean): RegExp {
  let flags = "";
  let body = pattern;
  const leading = /^\(\?([imsU]+)\)/.exec(body);
  if (leading) {
    for (const flag of new Set(leading[1]!)) {
      // RE2's `U` (ungreedy) has no JavaScript counterpart.
      if (flag === "U") throw new SyntaxError(`regex flag "U" is not supported in "${pattern}"`);
      flags += flag;
    }
    body = body.slice(leading[0].length);
  }
  body = body.replace(/\(\?P</g, "(?<");
  try {
    return new RegExp(anchored ? `^(?:${body})$` : body, flags);
  } catch (error) {
    throw new SyntaxError(`invalid regular expression "${pattern}": ${(error as Error).message}`);
  }
}
