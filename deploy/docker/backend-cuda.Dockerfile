# A Switchyard backend on an NVIDIA GPU: CUDA 12 + cuDNN 9 runtime, and onnxruntime-node's
# CUDA execution provider. Build from the repository root (network access to the npm
# registry and to NuGet, where onnxruntime-node's install script fetches the provider):
#   docker build -f deploy/docker/backend-cuda.Dockerfile -t switchyard-backend:cuda .
FROM denoland/deno:bin-2.9.6 AS deno

FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
COPY --from=deno /deno /usr/local/bin/deno
ENV DENO_DIR=/deno-dir

WORKDIR /app
COPY deno.json deno.lock ./
COPY shared ./shared
COPY gpu-backend ./gpu-backend
COPY tools/model ./tools/model
# Deno skips npm install scripts unless allowed. onnxruntime-node's postinstall downloads
# libonnxruntime_providers_cuda.so (+ _shared, _tensorrt) for CUDA 12 from NuGet into its
# bin/ folder; ONNXRUNTIME_NODE_INSTALL=cuda12 makes it do so even without a GPU at build
# time. Without this step only the CPU provider exists and the backend falls back to it.
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
RUN deno install --allow-scripts=npm:onnxruntime-node \
      --entrypoint gpu-backend/main.ts tools/model/gen_model.ts \
 && find node_modules/.deno -name 'libonnxruntime_providers_cuda.so' | grep -q . \
 && useradd --create-home --uid 1001 switchyard && mkdir -p /models \
 && chown -R switchyard /models /deno-dir

# cuda first, cpu as the explicit fallback: /v2/health/ready and the logs say which runs.
ENV SWITCHYARD_BACKEND__EXECUTION_PROVIDERS='["cuda","cpu"]' \
    SWITCHYARD_BACKEND__HOST=0.0.0.0 \
    SWITCHYARD_LOG__DIR=""
USER switchyard
EXPOSE 9001
ENTRYPOINT ["deno", "run", "-A", "gpu-backend/main.ts"]
CMD ["--config", "/etc/switchyard/switchyard.yaml"]
