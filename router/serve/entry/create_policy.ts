/**
 * @module Builds the routing policy named in `router.policy`.
 */
import type { Config } from "../../../shared/config.ts";
import { type BackendLoadSignal, LoadWeightedPolicy } from "./load_weighted.ts";
import type { RoutingPolicy } from "./policy.ts";
import { PowerOfTwoPolicy } from "./power_of_two.ts";
import { RoundRobinPolicy } from "./round_robin.ts";

/** A policy name accepted by the config. */
export type PolicyName = Config["router"]["policy"];

/** Options of {@linkcode createPolicy}. */
export interface CreatePolicyOptions {
  /** Random source for randomised policies; default `Math.random`. */
  random?: () => number;
  /** Reported load per backend id, for the `load` policy; default: none (in-flight only). */
  loadOf?: (backendId: string) => BackendLoadSignal | undefined;
}

/** Every policy name, for contract tests and docs. */
export const POLICY_NAMES: readonly PolicyName[] = ["p2c", "load", "round_robin"];

/** Creates the policy for a config name. */
export function createPolicy(name: PolicyName, options: CreatePolicyOptions = {}): RoutingPolicy {
  switch (name) {
    case "p2c":
      return new PowerOfTwoPolicy(options.random ? { random: options.random } : {});
    case "load":
      return new LoadWeightedPolicy({
        ...(options.random ? { random: options.random } : {}),
        ...(options.loadOf ? { loadOf: options.loadOf } : {}),
      });
    case "round_robin":
      return new RoundRobinPolicy();
    default:
      throw new RangeError(`Cannot create routing policy: unknown name "${name satisfies never}"`);
  }
}
