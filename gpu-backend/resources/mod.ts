/** @module Node resources of a backend: CPU time, network bytes, accelerator readings. */
export * from "./net_counter.ts";
export * from "./nvidia_smi.ts";
export * from "./nvidia_smi_parse.ts";
export * from "./resource_meter.ts";
export * from "./own_gpu.ts";
