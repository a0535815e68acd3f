/**
 * @module Pure data shaping for the dashboard page: snapshot JSON in, chart data and
 * table rows out. No DOM, no ECharts; unit-tested under Deno (`page_model_test.ts`).
 * Missing values stay missing: a formatter answers "n/a", never a made-up number.
 */

/** Text for a value the API gave as null/absent. */
export const NA = "n/a";

function isNumber(value) {
  return typeof value === "number" && Number.isFinite(value);
}

/** `1234.5` → `"1,234.5"` (up to `digits` decimals); "n/a" for null. */
export function formatNumber(value, digits = 1) {
  if (!isNumber(value)) return NA;
  return value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

/** Share in [0, 1] → `"42.0 %"`; "n/a" for null. */
export function formatPercent(value) {
  return isNumber(value) ? `${(value * 100).toFixed(1)} %` : NA;
}

/** Bytes → `"12.3 MiB"`; "n/a" for null. */
export function formatBytes(value) {
  if (!isNumber(value)) return NA;
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let scaled = value;
  let unit = 0;
  while (Math.abs(scaled) >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit++;
  }
  return `${scaled.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Bytes per second → `"1.2 MiB/s"`; "n/a" for null. */
export function formatByteRate(value) {
  return isNumber(value) ? `${formatBytes(value)}/s` : NA;
}

/** Epoch ms → `"HH:MM:SS"` (local time); "n/a" for null. */
export function formatTime(ms) {
  if (!isNumber(ms)) return NA;
  return new Date(ms).toLocaleTimeString("en-GB", { hour12: false });
}

/** The load entry of `model`, else the first model, else undefined. */
export function modelLoad(load, model) {
  const models = load?.models ?? [];
  return models.find((m) => m.model === model) ?? models[0];
}

/**
 * The layers × experts grid of one model: `rows[i]` is the API's `expert_tokens_s` of
 * layer `layers[i]` (API order), `experts` the widest row, `max` the largest value.
 */
export function heatmapGrid(load, model) {
  const entry = modelLoad(load, model);
  if (entry === undefined) return { model: null, layers: [], experts: 0, rows: [], max: 0 };
  const rows = entry.layers.map((l) => l.expert_tokens_s);
  let max = 0;
  for (const row of rows) {
    for (const value of row) if (value > max) max = value;
  }
  return {
    model: entry.model,
    layers: entry.layers.map((l) => l.layer),
    experts: Math.max(0, ...rows.map((r) => r.length)),
    rows,
    max,
  };
}

function replicaName(entry) {
  return entry.backend ?? entry.name ?? entry.id ?? "?";
}

function replicaRates(entry) {
  return entry.expert_tokens_s ?? entry.tokens_s ?? null;
}

/** Per-backend rate vectors of one layer, from whichever shape `?detail=replicas` gave. */
function replicaVectors(load, model, layer) {
  const entry = modelLoad(load, model);
  const layerEntry = entry?.layers.find((l) => l.layer === layer);
  // Shape 1: `models[].layers[].replicas[]: { backend, expert_tokens_s }`.
  const perLayer = layerEntry?.replicas ?? layerEntry?.backends;
  if (Array.isArray(perLayer) && perLayer.length > 0) {
    return perLayer
      .filter((r) => Array.isArray(replicaRates(r)))
      .map((r) => ({ backend: String(replicaName(r)), rates: replicaRates(r) }));
  }
  // Shape 2: `backends[].layers[]` or `backends[].models[].layers[]` with expert rates.
  const vectors = [];
  for (const backend of load?.backends ?? []) {
    const layers = backend.layers ??
      (backend.models ?? []).find((m) => m.model === entry?.model)?.layers;
    const found = Array.isArray(layers) ? layers.find((l) => l.layer === layer) : undefined;
    if (found && Array.isArray(replicaRates(found))) {
      vectors.push({ backend: String(backend.name ?? backend.id), rates: replicaRates(found) });
    }
  }
  return vectors;
}

/**
 * Experts × backends of one layer. With per-backend rates (`/api/load?detail=replicas`)
 * `kind` is "rates" and values are tokens/s; otherwise, with a plan, `kind` is "hosted"
 * and values are 1 where the plan places a replica; else "none".
 */
export function replicaMatrix(load, plan, model, layer) {
  const vectors = replicaVectors(load, model, layer);
  if (vectors.length > 0) {
    const data = [];
    let max = 0;
    let experts = 0;
    vectors.forEach(({ rates }, y) => {
      experts = Math.max(experts, rates.length);
      rates.forEach((value, x) => {
        if (value === null || value === undefined) return;
        data.push([x, y, value]);
        if (value > max) max = value;
      });
    });
    return { kind: "rates", backends: vectors.map((v) => v.backend), experts, data, max };
  }
  const planLayer = plan?.layers?.find((l) => l.layer === layer);
  if (planLayer !== undefined) {
    const data = [];
    let experts = 0;
    planLayer.hosted.forEach((entry, y) => {
      for (const expert of entry.experts) {
        data.push([expert, y, 1]);
        experts = Math.max(experts, expert + 1);
      }
    });
    return {
      kind: "hosted",
      backends: planLayer.hosted.map((h) => h.backend),
      experts,
      data,
      max: 1,
    };
  }
  return { kind: "none", backends: [], experts: 0, data: [], max: 0 };
}

/** Time view cells `[columnIndex, expert, tokens/s]`; columns without data give no cells. */
export function timelineData(timeline) {
  const columns = timeline?.columns ?? [];
  const data = [];
  let max = 0;
  let experts = 0;
  columns.forEach((column, x) => {
    const rates = column.expert_tokens_s;
    if (!Array.isArray(rates)) return;
    experts = Math.max(experts, rates.length);
    rates.forEach((value, expert) => {
      data.push([x, expert, value]);
      if (value > max) max = value;
    });
  });
  return { starts: columns.map((c) => c.start), experts, data, max };
}

/** Trend series `[[at, value|null]]`: pool and worst-layer balancedness, expert skew. */
export function trendSeries(trend) {
  const points = Array.isArray(trend) ? trend : [];
  return {
    pool: points.map((p) => [p.at, p.pool ?? null]),
    worst: points.map((p) => [p.at, p.worst ?? null]),
    skew: points.map((p) => [p.at, p.skew ?? null]),
  };
}

/**
 * The pool's balancedness (across backends) with its worst layer, as the header, the
 * plan panel and the advisor print it: `0.912 (worst L3 0.801)`.
 */
export function balanceText(load) {
  const pool = load?.pool;
  if (!isNumber(pool?.balancedness)) return NA;
  const worst = pool.worst_layer;
  return worst && isNumber(worst.balancedness)
    ? `${formatNumber(pool.balancedness, 3)} (worst L${worst.layer} ${
      formatNumber(worst.balancedness, 3)
    })`
    : formatNumber(pool.balancedness, 3);
}

function acceleratorOf(backend) {
  const accelerator = backend.accelerator;
  return accelerator !== null && typeof accelerator === "object" ? accelerator : null;
}

function acceleratorMemory(accelerator) {
  if (accelerator === null) return NA;
  const used = accelerator.memory_used_bytes;
  const total = accelerator.memory_total_bytes;
  if (!isNumber(used) && !isNumber(total)) return NA;
  return `${formatBytes(used)} / ${formatBytes(total)}`;
}

function powerOf(backend) {
  if (isNumber(backend.power_w)) return backend.power_w;
  const accelerator = backend.accelerator;
  if (accelerator && typeof accelerator === "object" && isNumber(accelerator.power_w)) {
    return accelerator.power_w;
  }
  return null;
}

/** `0.4 s`, `12 s`, `3 min`: an age in ms; n/a for null. */
export function formatAge(ms) {
  if (!isNumber(ms)) return NA;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`;
}

/** `fresh`, `stale` or `down` (the API's `state`, or from `stale` for older routers). */
export function backendState(b) {
  if (b.state === "fresh" || b.state === "stale" || b.state === "down") return b.state;
  return b.stale ? "stale" : "fresh";
}

/**
 * The pool as the header shows it: backends reporting fresh load out of all, and every
 * one that is not (`{ name, state, age }`, `age` its report's age in ms or null).
 */
export function poolHealth(load) {
  const backends = load?.backends ?? [];
  const problems = backends
    .filter((b) => backendState(b) !== "fresh")
    .map((b) => ({
      name: String(b.name ?? b.id),
      state: backendState(b),
      age: isNumber(b.report_age_ms) ? b.report_age_ms : null,
    }));
  return { fresh: backends.length - problems.length, total: backends.length, problems };
}

/** `backend-2 stale (12 s), backend-3 down`: the header's list of problems. */
export function problemText(problems) {
  return problems.map((p) =>
    `${p.name} ${p.state}${p.age === null ? "" : ` (report ${formatAge(p.age)} old)`}`
  ).join(", ");
}

/** One text row per backend for the node-resources table (every cell a string). */
export function resourceRows(load) {
  return (load?.backends ?? []).map((b) => {
    const state = backendState(b);
    const saturation = b.saturation && typeof b.saturation === "object" ? b.saturation : null;
    return {
      id: String(b.id),
      backend: String(b.name ?? b.id),
      state: state === "fresh" ? "fresh" : `${state}${b.error ? ` (${b.error})` : ""}`,
      stateKind: state,
      stale: state !== "fresh",
      reportAge: formatAge(b.report_age_ms),
      saturation: saturation === null
        ? NA
        : `${formatPercent(saturation.value)}${
          saturation.bottleneck ? ` (${saturation.bottleneck})` : ""
        }`,
      queueDepth: formatNumber(b.queue_depth, 0),
      provider: b.execution_provider
        ? `${b.execution_provider}${isNumber(b.slots) ? ` × ${b.slots}` : ""}`
        : NA,
      utilisation: formatPercent(b.utilisation),
      slots: formatNumber(b.slots, 0),
      cpuCores: formatNumber(b.cpu_cores, 2),
      memory: formatBytes(b.rss_bytes),
      netRx: formatByteRate(b.net_rx_bytes_s),
      netTx: formatByteRate(b.net_tx_bytes_s),
      net: isNumber(b.net_rx_bytes_s) || isNumber(b.net_tx_bytes_s)
        ? `${formatByteRate(b.net_rx_bytes_s)} / ${formatByteRate(b.net_tx_bytes_s)}`
        : NA,
      acceleratorUtil: formatPercent(acceleratorOf(b)?.utilisation),
      acceleratorMemory: acceleratorMemory(acceleratorOf(b)),
      power: isNumber(powerOf(b)) ? `${formatNumber(powerOf(b), 1)} W` : NA,
      tokensS: formatNumber(b.tokens_s, 1),
      inFlight: formatNumber(b.in_flight, 0),
      coldStarts: formatNumber(b.cold_starts, 0),
      coldStartsPerMin: formatNumber(b.cold_starts_per_min, 1),
      coldStartsBoth: isNumber(b.cold_starts)
        ? `${formatNumber(b.cold_starts, 0)} (${formatNumber(b.cold_starts_per_min, 1)}/min)`
        : NA,
    };
  });
}

/** The columns `[key, title]` of which some row has a value: always-n/a columns go. */
export function shownColumns(columns, rows) {
  return columns.filter(([key]) => rows.length === 0 || rows.some((row) => row[key] !== NA));
}

/**
 * The load the views show for an averaging window: the latest round's `load` with the
 * window's models and pool spread (`snapshot.window`, `router/operate/dashboard/load_window.ts`)
 * in place of the latest ones; `load` itself without a window.
 */
export function windowedLoad(load, window) {
  if (window === null || window === undefined) return load;
  return {
    ...load,
    models: window.models,
    pool: { ...load.pool, ...window.pool },
  };
}

/** Alert table rows (every cell a string); `active` first, then recent resolved ones. */
export function alertRows(alerts) {
  if (alerts === null || alerts === undefined) return null;
  const active = alerts.active ?? [];
  const activeIds = new Set(active.map((a) => a.id));
  const resolved = (alerts.recent ?? []).filter((a) => !activeIds.has(a.id));
  return [...active, ...resolved].map((a) => ({
    id: String(a.id),
    kind: String(a.kind),
    subject: String(a.subject),
    state: String(a.state),
    since: formatTime(a.fired_at),
    resolved: a.resolved_at === null || a.resolved_at === undefined
      ? ""
      : formatTime(a.resolved_at),
    value: `${formatNumber(a.value, 3)} vs ${formatNumber(a.threshold, 3)}`,
    message: String(a.message),
  }));
}

/** `42 replicas loaded since v6`, or n/a. */
function movesText(moves) {
  if (moves === null || moves === undefined) return NA;
  return moves.from_version === null
    ? `${moves.moved} replicas (first plan)`
    : `${moves.moved} replicas loaded since v${moves.from_version}`;
}

/** `1.2 GiB / 4.0 GiB` warm routed experts over the budget, or n/a. */
function residencyText(residency) {
  if (residency === null || residency === undefined) return NA;
  const budget = residency.budget_bytes === null
    ? "unlimited"
    : formatBytes(residency.budget_bytes);
  return `${formatBytes(residency.used_bytes)} / ${budget}`;
}

/** The plan's predicted pool balancedness and worst layer (what the trigger judges). */
function predictedText(plan) {
  const worst = plan.predicted_worst_layer;
  const pool = formatNumber(plan.predicted_balancedness, 3);
  return worst ? `${pool} (worst L${worst.layer} ${formatNumber(worst.balancedness, 3)})` : pool;
}

/** Plan facts for the summary list, and replicas per expert of one layer. */
export function planView(plan, layer, load) {
  if (plan === null || plan === undefined) return null;
  if (plan.error !== undefined) return { error: String(plan.error) };
  const planLayer = (plan.layers ?? []).find((l) => l.layer === layer);
  const replicasPerExpert = [];
  for (const entry of planLayer?.hosted ?? []) {
    for (const expert of entry.experts) {
      while (replicasPerExpert.length <= expert) replicasPerExpert.push(0);
      replicasPerExpert[expert]++;
    }
  }
  return {
    facts: [
      ["version", plan.version === null ? "none yet" : String(plan.version)],
      ["model", plan.model ?? NA],
      ["strategy", String(plan.strategy ?? NA)],
      ["reason", plan.reason ?? NA],
      ["created", formatTime(plan.created_at)],
      ["balancedness now", balanceText(load)],
      ["predicted balancedness", predictedText(plan)],
      ["threshold", formatNumber(plan.threshold, 3)],
      ["pinned", plan.pinned === null || plan.pinned === undefined ? "no" : String(plan.pinned)],
      [
        `replicas (layer ${layer})`,
        `${replicasPerExpert.reduce((a, b) => a + b, 0)} for ${
          replicasPerExpert.filter((n) => n > 0).length
        } experts; ${replicasPerExpert.filter((n) => n > 1).length} replicated`,
      ],
      [
        "slots per backend",
        plan.slots_per_backend === null || plan.slots_per_backend === undefined
          ? NA
          : String(plan.slots_per_backend),
      ],
      ["moves since last plan", movesText(plan.moves)],
    ],
    replicasPerExpert,
    perBackend: (planLayer?.hosted ?? []).map((h) => {
      const whole = (plan.moves?.backends ?? []).find((b) => b.backend === h.backend);
      const report = (load?.backends ?? []).find((b) => b.name === h.backend);
      const expertBytes = report?.residency?.expert_bytes;
      return {
        backend: String(h.backend),
        hosted: whole ? String(whole.hosted) : NA,
        // Bytes the plan puts there: hosted (layer, expert) pairs × the expert's bytes.
        bytes: whole && isNumber(expertBytes) ? formatBytes(whole.hosted * expertBytes) : NA,
        resident: residencyText(report?.residency),
        moved: whole ? String(whole.moved) : NA,
        experts: h.experts.length,
        replicated: h.experts.filter((e) => (replicasPerExpert[e] ?? 0) > 1).length,
        list: h.experts.join(", "),
      };
    }),
  };
}

/**
 * The `n` hottest (layer, expert) pairs of one model by tokens/s, each with its share of
 * its layer's tokens/s and the backends hosting it: from the plan when there is one,
 * else the backends that served it (per-backend rates).
 */
export function hotExperts(load, plan, model, n = 10) {
  const entry = modelLoad(load, model);
  if (entry === undefined) return [];
  const all = [];
  for (const layer of entry.layers) {
    const total = layer.expert_tokens_s.reduce((a, b) => a + (b ?? 0), 0);
    layer.expert_tokens_s.forEach((value, expert) => {
      if (value > 0) {
        all.push({ layer: layer.layer, expert, tokensS: value, share: value / total });
      }
    });
  }
  all.sort((a, b) => b.tokensS - a.tokensS || a.layer - b.layer || a.expert - b.expert);
  return all.slice(0, n).map((hot) => {
    const planLayer = plan?.layers?.find((l) => l.layer === hot.layer);
    let backends = (planLayer?.hosted ?? [])
      .filter((h) => h.experts.includes(hot.expert))
      .map((h) => String(h.backend));
    if (backends.length === 0) {
      backends = replicaVectors(load, entry.model, hot.layer)
        .filter((v) => (v.rates[hot.expert] ?? 0) > 0)
        .map((v) => v.backend);
    }
    return { ...hot, backends, replicas: backends.length };
  });
}
