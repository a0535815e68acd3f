/**
 * @module Builds the routing policy named in `router.policy`.
 */
import type { Config } from "../../shared/config.ts";
import type { RoutingPolicy } from "./policy.ts";
import { PowerOfTwoPolicy } from "./power_of_two.ts";
import { RoundRobinPolicy } from "./round_robin.ts";

/** A policy name accepted by the config. */
export type PolicyName = Config["router"]["policy"];

/** Options of {@linkcode createPolicy}. */
export interface CreatePolicyOptions {
  /** Random source for randomised policies; default `Math.random`. */
  random?: () => number;
}

/** Every policy name, for contract tests and docs. */
export const POLICY_NAMES: readonly PolicyName[] = ["p2c", "round_robin"];

/** Creates the policy for a config name. */
export function createPolicy(name: PolicyName, options: CreatePolicyOptions = {}): RoutingPolicy {
  switch (name) {
    case "p2c":
      return new PowerOfTwoPolicy(options.random ? { random: options.random } : {});
    case "round_robin":
      return new RoundRobinPolicy();
    default:
      throw new RangeError(`Cannot create routing policy: unknown name "${name satisfies never}"`);
  }
}
