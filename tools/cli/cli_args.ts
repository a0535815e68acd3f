/**
 * @module Command-line parsing for every task: `node:util` `parseArgs` plus a `--help`
 * (`-h`) generated from the same option list, so each option is described where it is
 * declared and no task answers "Unknown option '--help'". A parse error prints the
 * reason and a pointer to `--help` and exits 2.
 */
import { parseArgs } from "node:util";

/** One option: its parseArgs shape plus what `--help` says about it. */
export interface CliOption {
  type: "string" | "boolean";
  /** One line for `--help`. */
  description: string;
  default?: string | boolean;
  short?: string;
  multiple?: boolean;
  /** Placeholder of a string value in `--help` (default `<value>`). */
  value?: string;
}

/** `--model <dir>` of the tasks that run the demo model unless told otherwise. */
export const DEMO_MODEL_OPTION = {
  type: "string",
  default: "models/demo",
  value: "<dir>",
  description: "model directory",
} as const satisfies CliOption;

/** A task's command line. */
export interface CliSpec<O extends Record<string, CliOption>> {
  /** The task as typed, e.g. `deno task traffic`. */
  name: string;
  /** What the task does (one or a few lines). */
  summary: string;
  /** Positional arguments in the usage line, e.g. `'<LogQL>'`. */
  positionals?: string;
  options: O;
  /** Extra lines after the options (examples, notes). */
  epilog?: readonly string[];
}

/** Parsed `values` of a spec: strings, booleans or string lists, by option type. */
export type CliValues<O extends Record<string, CliOption>> = {
  [K in keyof O]: O[K]["multiple"] extends true ? string[] | undefined
    : O[K]["type"] extends "boolean" ? boolean | undefined
    : O[K]["default"] extends string ? string
    : string | undefined;
};

/** Result of {@linkcode parseCliArgs}: values to run with, or text to print and an exit code. */
export type CliParse<O extends Record<string, CliOption>> =
  | { kind: "run"; values: CliValues<O>; positionals: string[] }
  | { kind: "exit"; code: 0 | 2; text: string };

/** The `--help` text of a spec. */
export function helpText<O extends Record<string, CliOption>>(spec: CliSpec<O>): string {
  const rows = Object.entries(spec.options).map(([name, option]) => {
    const flag = `${option.short ? `-${option.short}, ` : "    "}--${name}${
      option.type === "string" ? ` ${option.value ?? "<value>"}` : ""
    }`;
    const fallback = option.default !== undefined && option.default !== false
      ? ` (default: ${option.default})`
      : "";
    return [flag, `${option.description}${fallback}`] as const;
  });
  rows.push(["-h, --help", "show this help and exit"]);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return [
    `Usage: ${spec.name}${spec.positionals ? ` ${spec.positionals}` : ""} [options]`,
    "",
    spec.summary,
    "",
    "Options:",
    ...rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    ...(spec.epilog?.length ? ["", ...spec.epilog] : []),
  ].join("\n");
}

/** Parses `args` against `spec` without exiting (for tests and `main()` functions). */
export function parseCliArgs<O extends Record<string, CliOption>>(
  spec: CliSpec<O>,
  args: readonly string[],
): CliParse<O> {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }
  > = {
    help: { type: "boolean", short: "h" },
  };
  for (const [name, option] of Object.entries(spec.options)) {
    options[name] = {
      type: option.type,
      ...(option.short ? { short: option.short } : {}),
      ...(option.multiple ? { multiple: true } : {}),
      ...(option.default !== undefined ? { default: option.default } : {}),
    };
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options,
      allowPositionals: spec.positionals !== undefined,
      strict: true,
    });
  } catch (error) {
    return {
      kind: "exit",
      code: 2,
      text: `${spec.name}: ${(error as Error).message}\nRun "${spec.name} --help" for the options.`,
    };
  }
  if (parsed.values["help"] === true) return { kind: "exit", code: 0, text: helpText(spec) };
  const { help: _help, ...values } = parsed.values;
  return { kind: "run", values: values as CliValues<O>, positionals: parsed.positionals };
}

/** Parses `args` (default `Deno.args`); prints help or the parse error and exits when asked. */
export function parseCli<O extends Record<string, CliOption>>(
  spec: CliSpec<O>,
  args: readonly string[] = Deno.args,
): { values: CliValues<O>; positionals: string[] } {
  const result = parseCliArgs(spec, args);
  if (result.kind === "run") return result;
  const bytes = new TextEncoder().encode(`${result.text}\n`);
  (result.code === 0 ? Deno.stdout : Deno.stderr).writeSync(bytes);
  Deno.exit(result.code);
}
