/** @module Expert placement planners: EPLB's greedy baseline and Switchyard's refined planner. */
export * from "./eplb_greedy.ts";
export * from "./eplb_planner.ts";
export * from "./placement_input.ts";
