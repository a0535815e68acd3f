/**
 * @module The residency policy, pure: which warm experts to evict to fit a memory budget,
 * and which requested experts a warm-up can load.
 *
 * Design. A backend keeps routed experts warm (session loaded and warmed up) up to
 * `budgetBytes` of expert weights. Eviction is least recently used first among experts
 * that are neither pinned (hosted here by the active or staged placement plan) nor busy
 * (work queued or running, or still loading), nor protected by the caller (what is being
 * loaded right now). Invariant: an evicted expert is always evictable; pinned or busy
 * experts may keep usage above the budget — the budget bounds the cache, never the plan.
 * Gates and shared experts are always resident and are not counted (callers do not pass
 * them).
 */

/** A warm (or loading) routed expert as the policy sees it. */
export interface Resident {
  /** Part key, e.g. `L0/E3`. */
  key: string;
  /** Weight bytes it holds. */
  bytes: number;
  /** When it was last used (ms, any monotonic clock). */
  lastUsedAt: number;
  /** Hosted here by the active or staged plan: never evicted. */
  pinned: boolean;
  /** Queued, running or loading work: never evicted. */
  busy: boolean;
}

/** Options of {@linkcode chooseEvictions}. */
export interface ChooseEvictionsOptions {
  /** Bytes about to be loaded on top of the residents (default 0). */
  extraBytes?: number;
  /** Keys that must not be evicted besides pinned and busy ones. */
  protect?: ReadonlySet<string>;
}

/** Evictions, oldest first, and whether usage then fits the budget. */
export interface Evictions {
  evict: string[];
  fits: boolean;
}

/** Sum of the residents' bytes. */
export function usedBytes(residents: readonly Resident[]): number {
  return residents.reduce((sum, resident) => sum + resident.bytes, 0);
}

/**
 * The least recently used evictable residents whose eviction brings
 * `used + extraBytes` within `budgetBytes` (or as close as eviction allows: `fits`
 * false). An unlimited budget (`null`) evicts nothing.
 */
export function chooseEvictions(
  residents: readonly Resident[],
  budgetBytes: number | null,
  options: ChooseEvictionsOptions = {},
): Evictions {
  if (budgetBytes === null) return { evict: [], fits: true };
  let used = usedBytes(residents) + (options.extraBytes ?? 0);
  const evict: string[] = [];
  // Step 1: evictable residents, least recently used first (a stable sort: ties keep the
  // caller's order, which is LRU order for `ExpertResidency.residents()`).
  const candidates = residents
    .filter((r) => !r.pinned && !r.busy && !(options.protect?.has(r.key) ?? false))
    .sort((a, b) => a.lastUsedAt - b.lastUsedAt);
  // Step 2: evict until the usage fits.
  for (const candidate of candidates) {
    if (used <= budgetBytes) break;
    evict.push(candidate.key);
    used -= candidate.bytes;
  }
  return { evict, fits: used <= budgetBytes };
}

/** One expert a warm-up asks for. */
export interface WarmRequest {
  key: string;
  bytes: number;
}

/** What a warm-up does: load these, evicting those first; the rest were warm or skipped. */
export interface WarmPlan {
  /** Cold experts to load, in priority order. */
  load: string[];
  /** Requested experts already warm (or loading). */
  alreadyWarm: string[];
  /** Warm experts to evict before loading. */
  evict: string[];
  /** Requested experts that do not fit the budget even after every allowed eviction. */
  skipped: string[];
}

/**
 * Plans a warm-up of `requests` in priority order (first = most wanted). Each cold
 * request is loaded if the budget holds it after evicting least recently used
 * evictable residents — never pinned, busy or earlier-accepted requests; otherwise it
 * is skipped and the next request is tried (a smaller one may still fit). Duplicates
 * count once. Residents nobody asked for are evicted before requested ones, and a
 * lower-priority requested resident before a higher one; a requested expert evicted for
 * a higher-priority one is listed as evicted and (unless it fits again) skipped.
 */
export function planWarm(
  requests: readonly WarmRequest[],
  residents: readonly Resident[],
  budgetBytes: number | null,
): WarmPlan {
  const plan: WarmPlan = { load: [], alreadyWarm: [], evict: [], skipped: [] };
  // The simulated residency after each accepted request; accepted keys are protected.
  // Requested residents count as more recently used than any other, in priority order,
  // so a warm-up evicts what nobody asked for before what was asked for later.
  const priority = new Map<string, number>();
  requests.forEach((request, i) => {
    if (!priority.has(request.key)) priority.set(request.key, i);
  });
  let state = residents.map((r) => {
    const rank = priority.get(r.key);
    return rank === undefined ? { ...r } : { ...r, lastUsedAt: Number.MAX_SAFE_INTEGER - rank };
  });
  const accepted = new Set<string>();
  for (const request of requests) {
    if (accepted.has(request.key) || plan.skipped.includes(request.key)) continue;
    if (state.some((r) => r.key === request.key)) {
      plan.alreadyWarm.push(request.key);
      accepted.add(request.key);
      continue;
    }
    const { evict, fits } = chooseEvictions(state, budgetBytes, {
      extraBytes: request.bytes,
      protect: accepted,
    });
    if (!fits) {
      plan.skipped.push(request.key);
      continue;
    }
    const evicted = new Set(evict);
    state = state.filter((r) => !evicted.has(r.key));
    state.push({ ...request, lastUsedAt: Infinity, pinned: false, busy: true });
    plan.evict.push(...evict);
    plan.load.push(request.key);
    accepted.add(request.key);
  }
  return plan;
}
