import assert from "node:assert/strict";

async function plan(input: string, args: string[] = []) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./plan.ts", import.meta.url).pathname, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const output = await child.output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("deno task plan reads stdin and prints a valid plan", async () => {
  const input = {
    weight: [[10, 1, 1, 1]],
    num_replicas: 6,
    num_groups: 1,
    num_nodes: 1,
    num_gpus: 2,
  };
  const result = await plan(JSON.stringify(input));
  assert.equal(result.code, 0, result.stderr);
  const out = JSON.parse(result.stdout);
  assert.deepEqual(out.logcnt, [[2, 2, 1, 1]]);
  assert.equal(out.phy2log[0].length, 6);
  assert.equal(out.log2phy[0].length, 4);
  assert.equal(out.balancedness[0], 1);
});

Deno.test("deno task plan exits non-zero with a message naming the bad field", async () => {
  const cases: [unknown, RegExp][] = [
    [
      { weight: [[1, -2]], num_replicas: 2, num_groups: 1, num_nodes: 1, num_gpus: 1 },
      /weight\[0\]\[1\]/,
    ],
    [
      { weight: [[1, 2, 3]], num_replicas: 2, num_groups: 1, num_nodes: 1, num_gpus: 1 },
      /num_replicas/,
    ],
    [
      { weight: [[1, 2]], num_replicas: 3, num_groups: 1, num_nodes: 1, num_gpus: 2 },
      /num_gpus|num_replicas/,
    ],
  ];
  for (const [input, message] of cases) {
    const result = await plan(JSON.stringify(input));
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, message);
  }
  const bad = await plan("{not json");
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /^Cannot /);
});
