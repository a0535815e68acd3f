/** @module Name and version the router reports on `GET /v2`. */

/** Server name in OIP server metadata. */
export const ROUTER_NAME = "switchyard";
/** Router version in OIP server metadata. */
export const ROUTER_VERSION = "0.1.0";
