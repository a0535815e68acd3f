import assert from "node:assert/strict";
import { helpText, parseCliArgs } from "./cli_args.ts";

const SPEC = {
  name: "deno task demo",
  summary: "Does the demo.",
  positionals: "[file]",
  options: {
    rate: { type: "string", default: "20", value: "<req/s>", description: "requests per second" },
    json: { type: "boolean", description: "JSON output" },
    tag: { type: "string", multiple: true, short: "t", description: "a tag" },
  },
  epilog: ["Example: deno task demo --rate 5"],
} as const;

Deno.test("parseCliArgs() returns typed values with defaults and positionals", () => {
  const parsed = parseCliArgs(SPEC, ["in.json", "--json", "-t", "a", "--tag", "b"]);
  assert.equal(parsed.kind, "run");
  if (parsed.kind !== "run") return;
  assert.equal(parsed.values.rate, "20");
  assert.equal(parsed.values.json, true);
  assert.deepEqual(parsed.values.tag, ["a", "b"]);
  assert.deepEqual(parsed.positionals, ["in.json"]);
});

Deno.test("parseCliArgs() answers --help and -h with the generated help, exit 0", () => {
  for (const flag of ["--help", "-h"]) {
    const parsed = parseCliArgs(SPEC, ["--rate", "3", flag]);
    assert.deepEqual(parsed, { kind: "exit", code: 0, text: helpText(SPEC) });
  }
  assert.equal(
    helpText(SPEC),
    [
      "Usage: deno task demo [file] [options]",
      "",
      "Does the demo.",
      "",
      "Options:",
      "      --rate <req/s>  requests per second (default: 20)",
      "      --json          JSON output",
      "  -t, --tag <value>   a tag",
      "  -h, --help          show this help and exit",
      "",
      "Example: deno task demo --rate 5",
    ].join("\n"),
  );
});

Deno.test("parseCliArgs() names an unknown option and points at --help, exit 2", () => {
  const parsed = parseCliArgs(SPEC, ["--bogus"]);
  assert.equal(parsed.kind, "exit");
  if (parsed.kind !== "exit") return;
  assert.equal(parsed.code, 2);
  assert.match(parsed.text, /Unknown option '--bogus'/);
  assert.match(parsed.text, /Run "deno task demo --help" for the options/);
  const noPositionals = parseCliArgs({ ...SPEC, positionals: undefined }, ["stray"]);
  assert.equal(noPositionals.kind, "exit");
});
