import assert from "node:assert/strict";
import { ownGpu } from "./own_gpu.ts";

Deno.test("ownGpu() maps the CUDA device through CUDA_VISIBLE_DEVICES", () => {
  const cuda = (deviceId: number, cudaVisibleDevices: string | undefined) =>
    ownGpu({ provider: "cuda", deviceId, cudaVisibleDevices });
  assert.equal(cuda(0, undefined), "0");
  assert.equal(cuda(3, undefined), "3");
  assert.equal(cuda(0, "2"), "2", "one visible device: physical 2");
  assert.equal(cuda(1, "2, 5"), "5");
  assert.equal(cuda(0, "GPU-8f1c2d3e-aaaa-bbbb"), "GPU-8f1c2d3e-aaaa-bbbb");
  assert.equal(cuda(2, "0,1"), null, "device_id beyond the visible devices");
  assert.equal(cuda(0, ""), null, "no device visible");
});

Deno.test("ownGpu() gives no device to a backend that does not run on CUDA", () => {
  assert.equal(ownGpu({ provider: "cpu", deviceId: 0, cudaVisibleDevices: undefined }), null);
  assert.equal(ownGpu({ provider: "simulated", deviceId: 0, cudaVisibleDevices: "1" }), null);
});
