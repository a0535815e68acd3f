import assert from "node:assert/strict";
import { fakeRun } from "./_fake_run.ts";
import { placementConfigs } from "./configs.ts";
import { outcomeOf } from "./outcome.ts";
import { itemTargets } from "./targets.ts";
import { fmtSpread, summaryMarkdown } from "./summary.ts";
import { readingNotes } from "./reading.ts";

function section() {
  const outcomes = [1, 2].flatMap((seed) =>
    ["static", "eplb-10min", "switchyard"].map((config, i) =>
      outcomeOf(
        fakeRun({
          config,
          seed,
          saturated: 1000 + 250 * i + (seed === 1 ? 0 : 100 * i),
          sweep: { "0.7": [700, 40 - 10 * i], "0.9": [900, 60 - 10 * i] },
          shift: [2000, 60 - 10 * i],
          backendCv: 0.6 - 0.2 * i,
        }),
        50,
      )
    )
  );
  return {
    name: "simulated",
    label: "simulated executor",
    sloMs: 50,
    sloSource: "assumed",
    outcomes,
    targets: itemTargets(outcomes),
  };
}

Deno.test("summaryMarkdown() shows the header, targets, five metrics and every phase", () => {
  const s = section();
  const text = summaryMarkdown({
    header: ["Command: `deno task bench`", "", "- commit: abc"],
    notes: ["model bench-moe"],
    configs: placementConfigs(["static", "eplb-10min", "switchyard"]),
    executors: [s],
    demo: null,
    failures: ["onnx eplb-10min seed 2: backend-3 did not become ready"],
    reading: readingNotes([s], []),
  });
  assert.match(text, /^# Switchyard before\/after/);
  assert.match(text, /Command: `deno task bench`\n\n- commit: abc\n- model bench-moe/);
  assert.match(text, /\| eplb-10min \| greedy EPLB/);
  // The saturation target: switchyard 1500, 1700 vs static 1000 per seed.
  assert.match(
    text,
    /\| saturation throughput \(tokens\/s\), switchyard ÷ static \| simulated \| ≥ 1\.4× \| 1\.60× \[1\.50–1\.70\] \| \*\*met\*\* \(2\/2 seeds\) \|/,
  );
  assert.match(text, /SLO: 50 ms per request \(assumed\)/);
  assert.match(
    text,
    /\| throughput at saturation \(tokens\/s\) \| 300 \[300–300\] \| 390 \[375–405\] \|/,
  );
  assert.match(text, /\| 0\.7× \| switchyard \| 70\.0 \[70\.0–70\.0\] \|/);
  assert.match(text, /### Shift phase/);
  assert.match(text, /goodput, mix 2 \(req\/s\)/);
  assert.match(text, /HOST-bound/, "busy 50 % at saturation: the host, not the devices");
  assert.match(text, /Errors by kind \(all seeds\) — static: none;/);
  assert.match(
    text,
    /## Failed runs\n\nLeft out of every figure above:\n\n- onnx eplb-10min seed 2: /,
  );
});

Deno.test("readingNotes() puts the balance ceiling beside the gains when static's busiest device binds", () => {
  const outcomes = [
    outcomeOf(
      fakeRun({ config: "static", seed: 1, saturated: 1000, saturationBusy: [0.96, 0.64] }),
      50,
    ),
    outcomeOf(
      fakeRun({ config: "switchyard", seed: 1, saturated: 1150, saturationBusy: [0.9, 0.9] }),
      50,
    ),
  ];
  const s = { ...section(), outcomes, targets: itemTargets(outcomes) };
  const [note] = readingNotes([s], []);
  assert.match(note!, /the devices, not the host, bound the pool/);
  assert.match(note!, /busiest device was 96 % busy at saturation and the mean 80 %/);
  assert.match(note!, /at most ~1\.20× \(busiest ÷ mean/);
  assert.match(note!, /measured: switchyard 1\.15×/);
  // A host-bound static run has no ceiling to state.
  assert.doesNotMatch(readingNotes([section()], [])[0]!, /ceiling/);
});

Deno.test("fmtSpread() shows the range only when there are several seeds", () => {
  assert.equal(fmtSpread({ mean: 2, min: 1, max: 3, n: 2 }, 1, "×"), "2.0× [1.0–3.0]");
  assert.equal(fmtSpread({ mean: 2, min: 2, max: 2, n: 1 }, 0), "2");
  assert.equal(fmtSpread({ mean: NaN, min: NaN, max: NaN, n: 0 }, 0), "n/a");
});
