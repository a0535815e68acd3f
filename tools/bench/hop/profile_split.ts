/**
 * @module Where a process's main-thread CPU goes, from a V8 `.cpuprofile` (`deno run
 * --cpu-prof`): every non-idle sample goes to the first bucket (in the given order) that
 * matches any frame of its stack, else to `other`. Start-up (module loading) is its own
 * bucket so a caller can leave it out of the shares.
 */

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string };
    children?: number[];
  }[];
  samples: number[];
  /** µs between consecutive samples. */
  timeDeltas: number[];
}

/** A named bucket; a frame matches when `pattern` matches `functionName url`. */
export interface Bucket {
  name: string;
  pattern: RegExp;
}

/** Milliseconds per bucket (in bucket order, then `other`); idle samples are not counted. */
export function splitProfile(
  profile: CpuProfile,
  buckets: readonly Bucket[],
): { name: string; ms: number }[] {
  const parent = new Map<number, number>();
  const label = new Map<number, string>();
  for (const node of profile.nodes) {
    label.set(node.id, `${node.callFrame.functionName} ${node.callFrame.url}`);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const totals = new Map<string, number>([...buckets.map((b) => [b.name, 0] as const)]);
  totals.set("other", 0);
  const memo = new Map<number, string | null>();
  const bucketOf = (leaf: number): string | null => {
    const cached = memo.get(leaf);
    if (cached !== undefined) return cached;
    if (label.get(leaf) === "(idle) ") {
      memo.set(leaf, null);
      return null;
    }
    const stack: string[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      stack.push(label.get(id) ?? "");
    }
    const found = buckets.find((b) => stack.some((frame) => b.pattern.test(frame)))?.name ??
      "other";
    memo.set(leaf, found);
    return found;
  };
  profile.samples.forEach((id, i) => {
    const bucket = bucketOf(id);
    if (bucket !== null) totals.set(bucket, totals.get(bucket)! + (profile.timeDeltas[i] ?? 0));
  });
  return [...totals].map(([name, us]) => ({ name, ms: us / 1000 }));
}

/** Buckets of the router and backend main threads, most specific first. */
export const SERVING_BUCKETS: readonly Bucket[] = [
  { name: "start-up (module loading)", pattern: /node:module|loadExtScript|op_lazy_load/ },
  { name: "onnxruntime calls", pattern: /onnxruntime|execution\/ort_/ },
  {
    name: "inference codec (header JSON, zod, tensors)",
    pattern: /shared\/(infer_request_codec|infer_response_codec|binary_tensor|header_length)\.ts/,
  },
  { name: "HTTP client (fetch to the backend)", pattern: /^fetch ext:deno_fetch\/26_fetch/ },
  {
    name: "observers, metrics, logs",
    pattern:
      /router\/(serve\/observe|operate\/(requests|metrics|logs))\/|prom-client|pino|shared\/logger|expert_trace/,
  },
  {
    name: "engine (routing, batching, combine)",
    pattern: /gpu-backend\/(moe|layer|batching|execution|residency)\//,
  },
  {
    name: "load reports, alerts, health rounds",
    pattern:
      /router\/(control\/load|operate\/alerts|serve\/pool\/health|wire\/(?!server\.ts))|gpu-backend\/(load|metrics)\//,
  },
  { name: "forwarding + routing (router)", pattern: /router\/serve\/(forward|entry|pool)\// },
  {
    name: "HTTP server + framework (Deno.serve, Hono, bodies)",
    pattern: /deno_http|hono\/|shared\/read_body|deno_fetch|deno_web\/06_streams/,
  },
  { name: "garbage collector", pattern: /^\(garbage collector\)/ },
];
