/** @module Balancedness and CV live in `shared/` (backends use them too); re-exported here. */
export { balancedness, coefficientOfVariation } from "../../shared/balancedness.ts";
