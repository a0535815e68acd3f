/** @module Expert placement planners: EPLB's greedy baseline and Switchyard's refined planner. */
export * from "./eplb_greedy.ts";
export * from "./eplb_planner.ts";
export * from "./placement_input.ts";
export * from "./placement_choice.ts";
export * from "./placement_cost.ts";
// The balancer: plans in KV, backend plan calls, the decision and the adapter.
export * from "./balancer.ts";
export * from "./balancer_types.ts";
export * from "./plan_client.ts";
export * from "./plan_math.ts";
export * from "./plan_store.ts";
export * from "./plan_switch.ts";
export * from "./rebalancer.ts";
