/** @module Name, version and protocol extensions the router and backends report on `GET /v2`. */

/** Server name in OIP server metadata. */
export const ROUTER_NAME = "switchyard";
/** Router version in OIP server metadata. */
export const ROUTER_VERSION = "0.1.0";
/** OIP v2 extensions served: the binary tensor data extension (`Inference-Header-Content-Length`). */
export const OIP_EXTENSIONS = ["binary_tensor_data"];
