import assert from "node:assert/strict";
import type { PeerReport } from "../../../shared/load_report.ts";
import {
  addPeer,
  expertRowCost,
  MIN_REMOTE_ROWS,
  NO_PEER,
  remoteRowCost,
} from "./remote_row_cost.ts";
import { assumedCosts, DEFAULT_REMOTE_ROW_MS, PlacementCostWindow } from "./cost_window.ts";

function peer(fields: Partial<PeerReport>): PeerReport {
  return { ...NO_PEER, ...fields };
}

Deno.test("remoteRowCost() is exposed transport time plus both sides' host CPU per remote row", () => {
  // 200 rows: 70 ms exposed, of it 40 ms the peers' own serving → 30 ms of transport;
  // 8 ms packing, 12 ms serving → 0.15 + 0.04 + 0.06 = 0.25 ms.
  const cost = remoteRowCost(
    peer({
      rowsSent: 200,
      exposedMs: 70,
      sendCpuMs: 8,
      serveCpuMs: 12,
      hopMs: 90,
      peerServeMs: 40,
    }),
  )!;
  assert.equal(cost.rows, 200);
  assert.equal(cost.exposedMs, 0.15);
  assert.equal(cost.sendCpuMs, 0.04);
  assert.equal(cost.serveCpuMs, 0.06);
  assert.ok(Math.abs(cost.ms - 0.25) < 1e-12, String(cost.ms));
  // A hop hidden under local work exposes less than the peer served: only the CPU counts.
  const hidden = remoteRowCost(
    peer({ rowsSent: 100, exposedMs: 5, peerServeMs: 40, sendCpuMs: 3 }),
  )!;
  assert.equal(hidden.exposedMs, 0);
  assert.equal(hidden.ms, 0.03);
});

Deno.test("remoteRowCost() and expertRowCost() say nothing from too few rows", () => {
  assert.equal(remoteRowCost(peer({ rowsSent: MIN_REMOTE_ROWS - 1, exposedMs: 5 })), null);
  assert.equal(remoteRowCost(NO_PEER, 0), null);
  assert.equal(expertRowCost(10, 100), null);
  assert.deepEqual(expertRowCost(50, 1000), { ms: 0.05, rows: 1000 });
});

Deno.test("addPeer() sums every counter", () => {
  const sum = addPeer(
    peer({ hops: 1, rowsSent: 2, serveCpuMs: 3 }),
    peer({ hops: 4, rowsSent: 5 }),
  );
  assert.deepEqual(sum, peer({ hops: 5, rowsSent: 7, serveCpuMs: 3 }));
});

const layer = (rows: number) => [{ layer: 0, expertTokensPerS: [rows], expertBusyMsPerS: [0] }];

Deno.test("PlacementCostWindow measures over its window, counts each report once, keeps the last measurement", () => {
  const window = new PlacementCostWindow({ windowMs: 10_000 });
  assert.deepEqual(window.estimates(0), assumedCosts());
  assert.equal(window.estimates(0).remoteRow.ms, DEFAULT_REMOTE_ROW_MS);
  const delta = peer({ rowsSent: 100, exposedMs: 10, sendCpuMs: 5, serveCpuMs: 5, hops: 10 });
  const backend = (at: number, stale = false) => ({
    id: "h:1",
    stale,
    utilisation: 0.5,
    slots: 1,
    expertLayers: layer(1000),
    peer: { at, delta },
  });
  window.record({ at: 1000, backends: [backend(900)] });
  // The same report again (a round whose poll failed is stale; one that repeats `at` too).
  window.record({ at: 2000, backends: [backend(900)] });
  window.record({ at: 3000, backends: [backend(900, true)] });
  assert.equal(window.totals().rowsSent, 100);
  const now = window.estimates(3000);
  assert.equal(now.remoteRow.source, "measured");
  assert.ok(Math.abs(now.remoteRow.ms - 0.2) < 1e-12);
  assert.deepEqual(now.remoteRow.parts, { exposedMs: 0.1, sendCpuMs: 0.05, serveCpuMs: 0.05 });
  // 500 busy ms per second over 1000 expert rows per second, three fresh rounds.
  assert.equal(now.expertRow.source, "measured");
  assert.equal(now.expertRow.ms, 0.5);
  // Past the window without crossings: the last measurement stays, saying how old it is.
  window.record({ at: 20_000, backends: [{ ...backend(19_900), peer: undefined }] });
  const later = window.estimates(20_000);
  assert.equal(later.remoteRow.source, "measured");
  assert.ok(Math.abs(later.remoteRow.ms - 0.2) < 1e-12);
  assert.match(later.remoteRow.detail, /17 s ago; too few rows crossed backends since/);
  assert.equal(window.totals().rowsSent, 100);
});
