/**
 * @module Test support: checks rendered Kubernetes objects. Core kinds are validated
 * against the Kubernetes OpenAPI schemas (`npm:kubernetes-models`); KServe's custom
 * and KEDA's custom resources, which those schemas do not cover, get the required-field
 * checks of their CRDs written out here. Each check returns problems as strings (empty: valid).
 */
import { ConfigMap, PersistentVolumeClaim, Service } from "kubernetes-models/v1";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";

/** A rendered object, as parsed from YAML. */
export type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  // deno-lint-ignore no-explicit-any
  spec?: any;
  // deno-lint-ignore no-explicit-any
  data?: any;
};

// deno-lint-ignore no-explicit-any
type Model = new (data: any) => { validate(): void };

const CORE: Record<string, Model> = {
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "v1/PersistentVolumeClaim": PersistentVolumeClaim,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
};

function need(problems: string[], value: unknown, what: string): void {
  const missing = value === undefined || value === null || value === "" ||
    (Array.isArray(value) && value.length === 0);
  if (missing) problems.push(`${what} is required`);
}

/** KServe `ServingRuntime` (serving.kserve.io/v1alpha1): fields its CRD requires. */
function servingRuntimeProblems(object: KubeObject): string[] {
  const problems: string[] = [];
  const spec = object.spec ?? {};
  need(problems, spec.containers, "spec.containers");
  for (const [i, container] of (spec.containers ?? []).entries()) {
    need(problems, container.name, `spec.containers[${i}].name`);
    need(problems, container.image, `spec.containers[${i}].image`);
  }
  need(problems, spec.supportedModelFormats, "spec.supportedModelFormats");
  for (const [i, format] of (spec.supportedModelFormats ?? []).entries()) {
    need(problems, format.name, `spec.supportedModelFormats[${i}].name`);
  }
  for (const version of spec.protocolVersions ?? []) {
    if (!["v1", "v2", "grpc-v1", "grpc-v2"].includes(version)) {
      problems.push(`spec.protocolVersions: unknown "${version}"`);
    }
  }
  return problems;
}

/** KServe `InferenceService` (serving.kserve.io/v1beta1): a predictor with a model. */
function inferenceServiceProblems(object: KubeObject): string[] {
  const problems: string[] = [];
  const model = object.spec?.predictor?.model;
  need(problems, object.spec?.predictor, "spec.predictor");
  need(problems, model?.modelFormat?.name, "spec.predictor.model.modelFormat.name");
  need(problems, model?.storageUri, "spec.predictor.model.storageUri");
  return problems;
}

/** KEDA `ScaledObject` (keda.sh/v1alpha1): a target and triggers, each with a type and metadata. */
function scaledObjectProblems(object: KubeObject): string[] {
  const problems: string[] = [];
  const spec = object.spec ?? {};
  need(problems, spec.scaleTargetRef?.name, "spec.scaleTargetRef.name");
  need(problems, spec.triggers, "spec.triggers");
  for (const [i, trigger] of (spec.triggers ?? []).entries()) {
    need(problems, trigger.type, `spec.triggers[${i}].type`);
    need(problems, trigger.metadata, `spec.triggers[${i}].metadata`);
    for (const [key, value] of Object.entries(trigger.metadata ?? {})) {
      // KEDA's trigger metadata is map[string]string: a number here fails admission.
      if (typeof value !== "string") {
        problems.push(`spec.triggers[${i}].metadata.${key}: not a string`);
      }
    }
  }
  for (const field of ["minReplicaCount", "maxReplicaCount", "pollingInterval", "cooldownPeriod"]) {
    const value = spec[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
      problems.push(`spec.${field}: must be an integer ≥ 0`);
    }
  }
  if ((spec.minReplicaCount ?? 0) > (spec.maxReplicaCount ?? 100)) {
    problems.push("spec.minReplicaCount: above maxReplicaCount");
  }
  return problems;
}

const CUSTOM: Record<string, (object: KubeObject) => string[]> = {
  "keda.sh/v1alpha1/ScaledObject": scaledObjectProblems,
  "serving.kserve.io/v1alpha1/ServingRuntime": servingRuntimeProblems,
  "serving.kserve.io/v1beta1/InferenceService": inferenceServiceProblems,
};

/** Problems of one object; an unknown apiVersion/kind is a problem too. */
export function objectProblems(object: KubeObject): string[] {
  const type = `${object.apiVersion}/${object.kind}`;
  const name = `${object.kind} "${object.metadata?.name}"`;
  if (!object.metadata?.name) return [`${type}: metadata.name is required`];
  const custom = CUSTOM[type];
  if (custom) return custom(object).map((problem) => `${name}: ${problem}`);
  const model = CORE[type];
  if (model === undefined) return [`${name}: no schema known for ${type}`];
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    return [`${name}: ${(error as Error).message}`];
  }
}

/** Every container of a workload's pod template (init containers included). */
// deno-lint-ignore no-explicit-any
export function podContainers(object: KubeObject): any[] {
  const pod = object.spec?.template?.spec ?? object.spec;
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
}
