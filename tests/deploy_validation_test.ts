/**
 * Offline validation of deploy/: the compose stack through `docker-compose config`
 * (Debian's docker-compose 1.29, no engine), every kustomize variant rendered by
 * `kubectl kustomize` (`$SWITCHYARD_KUBECTL`, else `kubectl` on PATH; `.ci/run` pins
 * Debian's) with every object checked against the Kubernetes schemas, the config files
 * inside against Switchyard's own schema, and the Prometheus rules with promtool.
 * Without a tool the test skips locally and fails under CI.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { resolveConfig } from "../shared/config.ts";
import { type KubeObject, objectProblems, podContainers } from "./_support/kubernetes_objects.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const DEPLOY = `${ROOT}deploy/`;
const KUBECTL = Deno.env.get("SWITCHYARD_KUBECTL") ?? "kubectl";
const TOKENS = {
  SWITCHYARD_ADMIN_TOKEN: "a".repeat(32),
  SWITCHYARD_INTERNAL_TOKEN: "b".repeat(32),
};

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  try {
    const out = await new Deno.Command(command, { args, env, cwd: ROOT }).output();
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

/** Runs the tool, or skips the test (fails under CI) when it is not installed. */
async function tool(t: Deno.TestContext, command: string, args: string[], env = {}) {
  const result = await run(command, args, env);
  if (result === undefined) {
    if (Deno.env.get("CI")) assert.fail(`${command} is required under CI (see .ci/run)`);
    // deno-lint-ignore no-console
    console.warn(`skipping ${t.name}: ${command} not installed`);
    return undefined;
  }
  assert.equal(result.code, 0, `${command} ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

Deno.test("deploy/compose: docker-compose config accepts the stack and its GPU variant", async (t) => {
  const file = "deploy/compose/docker-compose.yml";
  const cpu = await tool(t, "docker-compose", ["-f", file, "config"], TOKENS);
  if (cpu === undefined) return;
  const stack = parse(cpu);
  assert.deepEqual(
    Object.keys(stack.services).sort(),
    ["backend-1", "backend-2", "grafana", "loki", "model", "prometheus", "router"],
  );
  assert.equal(
    stack.services.router.environment.SWITCHYARD_AUTH__ADMIN_TOKEN,
    TOKENS.SWITCHYARD_ADMIN_TOKEN,
  );
  // Tokens must come from the environment: without them the stack does not render.
  const missing = await run("docker-compose", ["-f", file, "config", "-q"]);
  assert.notEqual(missing!.code, 0);
  assert.match(missing!.stderr, /SWITCHYARD_INTERNAL_TOKEN/);

  const gpu = parse(
    (await tool(t, "docker-compose", [
      "-f",
      file,
      "-f",
      "deploy/compose/docker-compose.gpu.yml",
      "config",
    ], TOKENS))!,
  );
  for (const name of ["backend-1", "backend-2"]) {
    const backend = gpu.services[name];
    assert.equal(backend.build.dockerfile, "deploy/docker/backend-cuda.Dockerfile");
    assert.equal(backend.deploy.resources.reservations.devices[0].driver, "nvidia");
  }
  // The file the containers read is a valid Switchyard config.
  const config = resolveConfig({
    fileText: await Deno.readTextFile(`${DEPLOY}compose/switchyard.yaml`),
  });
  assert.deepEqual(config.router.backends, ["http://backend-1:9001", "http://backend-2:9001"]);
  assert.equal(config.loki.url, "http://loki:3100");
});

async function render(t: Deno.TestContext, dir: string): Promise<KubeObject[] | undefined> {
  const out = await tool(t, KUBECTL, ["kustomize", `deploy/kubernetes/${dir}`]);
  if (out === undefined) return undefined;
  return parseAllDocuments(out).map((doc) => doc.toJS() as KubeObject).filter(Boolean);
}

function byKind(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.find((o) =>
    o.kind === kind && (name === undefined || o.metadata?.name === name)
  );
  assert.ok(found, `${kind} ${name ?? ""} rendered`);
  return found;
}

/** Checks every variant shares: schemas, namespaces, secrets, config maps, the config file. */
function checkCommon(objects: KubeObject[]): void {
  assert.deepEqual(objects.flatMap(objectProblems), []);
  for (const object of objects) assert.equal(object.metadata?.namespace, "switchyard");
  const configMaps = new Set(
    objects.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata!.name),
  );
  const allowedKeys = ["admin_token", "internal_token", "kv_access_token"];
  for (const object of objects) {
    for (const container of podContainers(object)) {
      for (const env of container.env ?? []) {
        const ref = env.valueFrom?.secretKeyRef;
        if (ref === undefined) continue;
        assert.equal(ref.name, "switchyard-tokens", `${object.metadata!.name} ${env.name}`);
        assert.ok(allowedKeys.includes(ref.key), ref.key);
      }
    }
    const volumes = object.spec?.template?.spec?.volumes ?? object.spec?.volumes ?? [];
    for (const volume of volumes) {
      if (volume.configMap) assert.ok(configMaps.has(volume.configMap.name), volume.configMap.name);
    }
  }
  // Every config file inside parses with Switchyard's own schema.
  for (const map of objects.filter((o) => o.kind === "ConfigMap" && o.data?.["switchyard.yaml"])) {
    const config = resolveConfig({ fileText: map.data["switchyard.yaml"] });
    assert.match(config.state.kv, /^http:\/\/switchyard-kv:4512$/);
  }
  const hpa = byKind(objects, "HorizontalPodAutoscaler", "switchyard-router");
  assert.equal(
    hpa.spec.scaleTargetRef.name,
    byKind(objects, "Deployment", "switchyard-router").metadata!.name,
  );
}

// deno-lint-ignore no-explicit-any
function checkStatefulBackends(objects: KubeObject[]): any {
  const backends = byKind(objects, "StatefulSet", "switchyard-backend");
  const service = byKind(objects, "Service", backends.spec.serviceName);
  assert.equal(service.spec.clusterIP, "None");
  byKind(objects, "PodDisruptionBudget", "switchyard-backend");
  const container = backends.spec.template.spec.containers[0];
  assert.equal(container.startupProbe.httpGet.path, "/v2/health/live");
  assert.equal(container.livenessProbe.httpGet.path, "/v2/health/live");
  assert.equal(container.readinessProbe.httpGet.path, "/v2/health/ready");
  const config = resolveConfig({ fileText: byKind(objects, "ConfigMap").data["switchyard.yaml"] });
  assert.equal(config.router.discovery.mode, "dns");
  assert.match(
    config.router.discovery.name!,
    new RegExp(`^_http\\._tcp\\.${service.metadata!.name}\\.`),
  );
  return container;
}

Deno.test("deploy/kubernetes: the cpu overlay renders valid objects", async (t) => {
  const objects = await render(t, "overlays/cpu");
  if (objects === undefined) return;
  checkCommon(objects);
  const container = checkStatefulBackends(objects);
  assert.equal(container.image, "switchyard-backend:cpu");
  assert.equal(container.resources.limits["nvidia.com/gpu"], undefined);
});

Deno.test("deploy/kubernetes: the gpu overlay requests one GPU per backend", async (t) => {
  const objects = await render(t, "overlays/gpu");
  if (objects === undefined) return;
  checkCommon(objects);
  const container = checkStatefulBackends(objects);
  assert.equal(container.image, "switchyard-backend:cuda");
  assert.equal(container.resources.limits["nvidia.com/gpu"], "1");
  const providers = container.env.find((e: { name: string }) =>
    e.name === "SWITCHYARD_BACKEND__EXECUTION_PROVIDERS"
  );
  assert.deepEqual(JSON.parse(providers.value), ["cuda", "cpu"]);
});

/** The routers' pre-warm settings in the rendered router Deployment's env. */
function routerPrewarm(objects: KubeObject[]): Record<string, string> {
  const router = byKind(objects, "Deployment", "switchyard-router");
  const env: { name: string; value?: string }[] = router.spec.template.spec.containers[0].env;
  return Object.fromEntries(
    env.filter((e) => e.name.startsWith("SWITCHYARD_PREWARM__") && e.value !== undefined)
      .map((e) => [e.name, e.value!]),
  );
}

Deno.test("deploy/kubernetes: KEDA scales the backends on the desired count the routers publish", async (t) => {
  const objects = await render(t, "autoscaling/keda");
  if (objects === undefined) return;
  checkCommon(objects);
  checkStatefulBackends(objects);
  const scaled = byKind(objects, "ScaledObject", "switchyard-backend");
  assert.deepEqual(scaled.spec.scaleTargetRef, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    name: byKind(objects, "StatefulSet", "switchyard-backend").metadata!.name,
  });
  const [trigger] = scaled.spec.triggers;
  assert.equal(trigger.type, "metrics-api");
  const url = new URL(trigger.metadata.url);
  const service = byKind(objects, "Service", "switchyard-router");
  assert.equal(url.hostname.split(".")[0], service.metadata!.name);
  assert.equal(Number(url.port || 80), service.spec.ports[0].port);
  // The route and field the router serves (router/control/prewarm/prewarm_routes.ts).
  assert.equal(url.pathname, "/api/prewarm/desired");
  assert.equal(trigger.metadata.valueLocation, "desired_replicas");
  assert.equal(trigger.metadata.targetValue, "1");
  const prewarm = routerPrewarm(objects);
  assert.equal(prewarm["SWITCHYARD_PREWARM__SCALER"], "kubernetes");
  assert.equal(Number(prewarm["SWITCHYARD_PREWARM__MIN_BACKENDS"]), scaled.spec.minReplicaCount);
  assert.equal(Number(prewarm["SWITCHYARD_PREWARM__MAX_BACKENDS"]), scaled.spec.maxReplicaCount);
  assert.equal(
    objects.filter((o) =>
      o.metadata?.name === "switchyard-backend" && o.kind === "HorizontalPodAutoscaler"
    ).length,
    0,
  );
});

Deno.test("deploy/kubernetes: an HPA scales the backends on the external metric the routers export", async (t) => {
  const objects = await render(t, "autoscaling/hpa");
  if (objects === undefined) return;
  checkCommon(objects);
  checkStatefulBackends(objects);
  const hpa = byKind(objects, "HorizontalPodAutoscaler", "switchyard-backend");
  assert.deepEqual(hpa.spec.scaleTargetRef, {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    name: "switchyard-backend",
  });
  const [metric] = hpa.spec.metrics;
  assert.equal(metric.type, "External");
  assert.deepEqual(metric.external.target, { type: "AverageValue", averageValue: "1" });
  // A gauge the router registers (router/operate/metrics/prewarm_metrics.ts) …
  const source = await Deno.readTextFile(`${ROOT}router/operate/metrics/prewarm_metrics.ts`);
  assert.ok(source.includes(`"${metric.external.metric.name}"`), metric.external.metric.name);
  // … that prometheus-adapter's rule serves as an external metric.
  const rules = parse(
    byKind(objects, "ConfigMap", "switchyard-prometheus-adapter-rules").data["config.yaml"],
  );
  assert.equal(rules.externalRules[0].name.as, metric.external.metric.name);
  const prewarm = routerPrewarm(objects);
  assert.equal(prewarm["SWITCHYARD_PREWARM__SCALER"], "kubernetes");
  assert.equal(Number(prewarm["SWITCHYARD_PREWARM__MIN_BACKENDS"]), hpa.spec.minReplicas);
  assert.equal(Number(prewarm["SWITCHYARD_PREWARM__MAX_BACKENDS"]), hpa.spec.maxReplicas);
  // The router accepts those settings.
  const config = resolveConfig({
    env: Object.fromEntries(Object.entries(prewarm)),
    fileText: objects.find((o) => o.data?.["switchyard.yaml"])!.data["switchyard.yaml"],
  });
  assert.equal(config.prewarm.scaler, "kubernetes");
});

Deno.test("deploy/kubernetes: the KServe variant pairs a ServingRuntime and an InferenceService", async (t) => {
  const objects = await render(t, "kserve");
  if (objects === undefined) return;
  checkCommon(objects);
  const runtime = byKind(objects, "ServingRuntime");
  const service = byKind(objects, "InferenceService");
  assert.equal(service.spec.predictor.model.runtime, runtime.metadata!.name);
  assert.ok(
    runtime.spec.supportedModelFormats.some((f: { name: string }) =>
      f.name === service.spec.predictor.model.modelFormat.name
    ),
  );
  assert.deepEqual(runtime.spec.protocolVersions, ["v2"]);
  assert.equal(objects.some((o) => o.kind === "StatefulSet"), false);
  for (const map of objects.filter((o) => o.kind === "ConfigMap")) {
    const config = resolveConfig({ fileText: map.data["switchyard.yaml"] });
    assert.equal(config.router.discovery.mode, "register");
    assert.equal(config.backend.port, runtime.spec.containers[0].ports[0].containerPort);
  }
});

Deno.test("deploy/prometheus: rules pass promtool check and their unit tests", async (t) => {
  const rules = "deploy/prometheus/rules/";
  if (await tool(t, "promtool", ["check", "rules", `${rules}switchyard.yml`]) === undefined) return;
  await tool(t, "promtool", ["test", "rules", `${rules}switchyard_test.yml`]);
  await tool(t, "promtool", [
    "check",
    "config",
    "--syntax-only",
    "deploy/prometheus/prometheus.yml",
    "deploy/compose/prometheus.yml",
  ]);
});

Deno.test("deploy/docker: Dockerfiles copy files that exist; the CUDA image runs ORT's install script", async () => {
  for (const name of ["router", "backend", "backend-cuda"]) {
    const text = await Deno.readTextFile(`${DEPLOY}docker/${name}.Dockerfile`);
    for (const [, sources] of text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of sources!.split(/\s+/)) await Deno.stat(`${ROOT}${source}`);
    }
  }
  const cuda = await Deno.readTextFile(`${DEPLOY}docker/backend-cuda.Dockerfile`);
  assert.match(cuda, /^FROM nvidia\/cuda:12\.[\d.]+-cudnn-runtime/m);
  assert.match(cuda, /deno install --allow-scripts=npm:onnxruntime-node/);
  // The router image never ships the backend (it must not need onnxruntime-node).
  const router = await Deno.readTextFile(`${DEPLOY}docker/router.Dockerfile`);
  assert.doesNotMatch(router, /gpu-backend|--allow-run|-A\b/);
});

Deno.test("deploy/grafana: provisioning names the data sources and the dashboards folder compose mounts", async () => {
  const sources = parse(
    await Deno.readTextFile(`${DEPLOY}grafana/provisioning/datasources/switchyard.yml`),
  );
  assert.deepEqual(sources.datasources.map((d: { type: string }) => d.type), [
    "prometheus",
    "loki",
  ]);
  const dashboards = parse(
    await Deno.readTextFile(`${DEPLOY}grafana/provisioning/dashboards/switchyard.yml`),
  );
  const compose = parse(await Deno.readTextFile(`${DEPLOY}compose/docker-compose.yml`));
  const mounts: string[] = compose.services.grafana.volumes;
  assert.ok(
    mounts.includes(`../grafana/dashboards:${dashboards.providers[0].options.path}:ro`),
    mounts.join(", "),
  );
});
