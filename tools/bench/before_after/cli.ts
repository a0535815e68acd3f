/**
 * @module The command line of `deno task bench` (`before_after/main.ts`): every option with its
 * default and what it is for. The defaults make the full run (3 seeds, both executors,
 * the demo check) about 45–50 minutes on a 2-core machine.
 */

/** `deno task bench`'s options. */
export const BEFORE_AFTER_CLI = {
  name: "deno task bench",
  summary: "Before/after that isolates balancing: static blocks vs greedy EPLB every 10 minutes\n" +
    "of load vs Switchyard's default, same pool, batching and entry routing, on the real\n" +
    "onnxruntime and the simulated executor (device time measured here), plus the demo-model\n" +
    "check with full replication; writes throughput.csv, latency.csv and summary.md to --out.",
  options: {
    executors: {
      type: "string",
      default: "simulated,onnx",
      value: "<list>",
      description: "simulated (one dedicated device per backend) and/or onnx (real, shared cores)",
    },
    model: {
      type: "string",
      default: "models/bench",
      value: "<dir>",
      description: "the budget pool's model (generated with --preset bench when missing)",
    },
    backends: { type: "string", default: "4", value: "<n>", description: "backend processes" },
    "budget-mb": {
      type: "string",
      default: "77.1",
      value: "<MiB>",
      description: "backend.memory_budget_mb (77.1: 102 of 256 experts per layer)",
    },
    redundancy: {
      type: "string",
      default: "0.6",
      value: "<r>",
      description: "expert_balancer.redundancy (0.6: the planner uses all 102 slots)",
    },
    configs: {
      type: "string",
      default: "static,eplb-10min,switchyard",
      value: "<list>",
      description: "configurations on the budget pool (static is the baseline, runs first)",
    },
    seeds: { type: "string", default: "1,2,3", value: "<list>", description: "seeds" },
    warm: {
      type: "string",
      default: "15",
      value: "<s>",
      description: "shortest warm-up (excluded from the results)",
    },
    settle: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "warm-up goes on until the plan has not changed for this long",
    },
    "max-warm": {
      type: "string",
      default: "60",
      value: "<s>",
      description: "longest warm-up",
    },
    idle: { type: "string", default: "4", value: "<s>", description: "idle phase (1 client)" },
    saturation: {
      type: "string",
      default: "10",
      value: "<s>",
      description: "closed-loop saturation phase",
    },
    ramp: {
      type: "string",
      default: "4",
      value: "<s>",
      description: "saturation's first seconds, excluded (the clients all start at once)",
    },
    concurrency: {
      type: "string",
      default: "64",
      value: "<n>",
      description: "closed-loop clients at saturation",
    },
    "warm-clients": {
      type: "string",
      default: "8",
      value: "<n>",
      description: "closed-loop clients during the warm-up",
    },
    rates: {
      type: "string",
      default: "0.5,0.7,1.0,1.3",
      value: "<list>",
      description: "open-loop rates, fractions of static's capacity",
    },
    sweep: { type: "string", default: "6", value: "<s>", description: "seconds per rate" },
    shift: {
      type: "string",
      default: "60",
      value: "<s>",
      description: "shift phase: one hour of load compressed into this (EPLB period = 1/6)",
    },
    "shift-rate": {
      type: "string",
      default: "0.9",
      value: "<f>",
      description: "shift phase's rate, fraction of static's capacity",
    },
    shifts: {
      type: "string",
      default: "2",
      value: "<n>",
      description: "mix changes during the shift phase",
    },
    burstiness: {
      type: "string",
      default: "1",
      value: "<k>",
      description: "gamma shape of open-loop gaps (1 = Poisson, < 1 bursty)",
    },
    tokens: {
      type: "string",
      value: "<min-max>",
      description: "tokens per request, uniform (default: 1 + geometric, mean ≈ 3, at most 16)",
    },
    zipf: {
      type: "string",
      default: "1",
      value: "<s>",
      description: "Zipf exponent over request types (1: 8 bestsellers at ~13×)",
    },
    "slo-ms": {
      type: "string",
      value: "<ms>",
      description: "latency SLO per request (default: --slo-scale × static's idle p50)",
    },
    "slo-scale": {
      type: "string",
      default: "10",
      value: "<x>",
      description: "SLO = this × the first seed's static idle p50 (assumed)",
    },
    "device-scale": {
      type: "string",
      default: "1",
      value: "<x>",
      description: "simulated device time = measured × this (≠ 1 is an assumption)",
    },
    "load-fixed-ms": {
      type: "string",
      default: "1",
      value: "<ms>",
      description: "simulated expert load time, fixed part (assumed)",
    },
    "load-ms-per-mb": {
      type: "string",
      default: "0.0164",
      value: "<ms>",
      description:
        "simulated expert load time per MiB (default: host → device over PCIe 5.0 x16, 64 GB/s, published)",
    },
    "demo-model": {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "the demo-model check's model (generated when missing)",
    },
    "demo-backends": {
      type: "string",
      default: "2",
      value: "<n>",
      description: "backends of the demo-model check (no memory budget)",
    },
    "demo-configs": {
      type: "string",
      default: "static,replicate-all,switchyard",
      value: "<list>",
      description: "configurations of the demo-model check",
    },
    "skip-demo": { type: "boolean", default: false, description: "no demo-model check" },
    out: {
      type: "string",
      default: "out/bench",
      value: "<dir>",
      description: "directory for the CSVs and summary.md",
    },
    smoke: {
      type: "boolean",
      default: false,
      description: "second-long phases, one seed (tests check the files' form)",
    },
  },
} as const;
