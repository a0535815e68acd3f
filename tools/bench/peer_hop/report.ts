/** @module The markdown report of `bench:peer-hop` (pure). */
import { formatTable, round } from "../stats.ts";
import type { ChannelCell } from "./channel.ts";
import type { IdleCell, LoadCell } from "./stack.ts";

/** Everything one run measured. */
export interface PeerHopResults {
  header: string[];
  channel: ChannelCell[];
  stacks: { overlap: string; idle: IdleCell[]; load: LoadCell }[];
}

const PHASES = ["queue", "batch", "exec", "handoff", "hop", "hop-hidden", "host", "backend"];

/** The report: header, the channel table, idle latency per crossing class, the load table. */
export function formatPeerHopReport(results: PeerHopResults): string {
  const lines = ["# bench:peer-hop", "", ...results.header, ""];
  lines.push(
    "## Step 1 — the expert channel alone (a peer that computes nothing)",
    "",
    "Round trip of one layer item, one at a time; `nodelay` is the channel's socket",
    "(`NoDelayWebSocket`: TCP_NODELAY, one write per wave), `deno` Deno's own WebSocket",
    "client, which the channel used before. CPU: host-thread µs per row from the channel's",
    "counters (entry side: pack, send, read the answer; peer side: decode, answer).",
    "",
    "```",
    formatTable(
      [
        "socket",
        "rows",
        "trips",
        "p50 ms",
        "p99 ms",
        "entry µs/row",
        "peer µs/row",
        "entry process µs/row",
        "peer process µs/row",
      ],
      results.channel.map((c) => [
        c.socket,
        c.rows,
        c.trips,
        round(c.p50Ms, 3),
        round(c.p99Ms, 3),
        round(c.sendUsPerRow, 1),
        round(c.serveUsPerRow, 1),
        round(c.entryProcessUsPerRow, 1),
        round(c.peerProcessUsPerRow, 1),
      ]),
    ),
    "```",
    "",
  );
  for (const stack of results.stacks) {
    lines.push(
      `## Steps 2–3 — the stack, backend.overlap_hops ${stack.overlap}`,
      "",
      "Idle: 1-token requests one at a time, classified by the layers whose rows crossed",
      "backends (from each answer's `Server-Timing`); p50 per class, then the median of each",
      "backend phase (ms).",
      "",
      "```",
      formatTable(
        ["target", "crossing layers", "n", "p50 ms", "p90 ms", ...PHASES],
        stack.idle.map((c) => [
          c.target,
          c.crossing,
          c.n,
          round(c.p50Ms, 3),
          round(c.p90Ms, 3),
          ...PHASES.map((p) => c.phases[p] === undefined ? "" : round(c.phases[p]!, 3)),
        ]),
      ),
      "```",
      "",
      `Per crossing layer at idle (p50 over the 0-crossing class): ${perLayer(stack.idle)}.`,
      `Router over direct at idle (p50, same crossing class): ${routerOverhead(stack.idle)}.`,
      "",
      "Under load (closed loop through the router), from the backends' load reports:",
      "",
      "```",
      formatTable(
        [
          "tokens/s",
          "p50 ms",
          "p99 ms",
          "crossing layers",
          "hop wall ms (Σ)",
          "exposed ms (Σ)",
          "hidden (own work)",
          "covered (any work)",
          "entry µs/row",
          "peer µs/row",
        ],
        [[
          round(stack.load.tokensPerS, 0),
          round(stack.load.p50Ms, 2),
          round(stack.load.p99Ms, 2),
          stack.load.hops,
          round(stack.load.hopMs, 0),
          round(stack.load.exposedMs, 0),
          round(stack.load.hiddenShare, 3),
          round(stack.load.coveredShare, 3),
          round(stack.load.sendUsPerRow, 1),
          round(stack.load.serveUsPerRow, 1),
        ]],
      ),
      "```",
      "",
    );
  }
  return lines.join("\n");
}

/** "+x ms per layer" from the direct targets' classes, or "n/a". */
function perLayer(idle: readonly IdleCell[]): string {
  const direct = idle.filter((c) => c.target !== "router");
  const base = median(direct.filter((c) => c.crossing === 0).map((c) => c.p50Ms));
  const parts = [1, 2, 3, 4].flatMap((k) => {
    const cells = direct.filter((c) => c.crossing === k);
    if (cells.length === 0 || !Number.isFinite(base)) return [];
    return [`${k} layer(s) +${round((median(cells.map((c) => c.p50Ms)) - base) / k, 3)} ms each`];
  });
  return parts.length > 0 ? parts.join(", ") : "n/a";
}

/** Router p50 minus the mean of the direct p50s, per crossing class. */
function routerOverhead(idle: readonly IdleCell[]): string {
  const parts = [0, 1, 2, 3, 4].flatMap((k) => {
    const router = idle.find((c) => c.target === "router" && c.crossing === k);
    const direct = idle.filter((c) => c.target !== "router" && c.crossing === k);
    if (!router || direct.length === 0) return [];
    return [`${k}: +${round(router.p50Ms - median(direct.map((c) => c.p50Ms)), 3)} ms`];
  });
  return parts.length > 0 ? parts.join(", ") : "n/a";
}

function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
