# A Switchyard backend on CPU (onnxruntime-node's bundled CPU provider).
# Build from the repository root:
#   docker build -f deploy/docker/backend.Dockerfile -t switchyard-backend:cpu .
FROM denoland/deno:2.9.6

WORKDIR /app
COPY deno.json deno.lock ./
COPY shared ./shared
COPY gpu-backend ./gpu-backend
COPY tools/model ./tools/model
# `deno install` skips npm install scripts: onnxruntime-node keeps its bundled CPU
# provider and does not try to download the CUDA one (see backend-cuda.Dockerfile).
RUN deno install --entrypoint gpu-backend/main.ts tools/model/gen_model.ts

ENV SWITCHYARD_BACKEND__EXECUTION_PROVIDERS='["cpu"]' \
    SWITCHYARD_BACKEND__HOST=0.0.0.0 \
    SWITCHYARD_LOG__DIR=""
RUN mkdir -p /models && chown deno:deno /models
USER deno
EXPOSE 9001
ENTRYPOINT ["deno", "run", "-A", "gpu-backend/main.ts"]
CMD ["--config", "/etc/switchyard/switchyard.yaml"]
