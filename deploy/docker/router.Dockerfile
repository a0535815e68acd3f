# The Switchyard router (edge router: Hono on Deno). Stateless: its shared state is Deno
# KV at state.kv (a KV Connect URL for more than one replica; see deploy/README.md).
# Build from the repository root:
#   docker build -f deploy/docker/router.Dockerfile -t switchyard-router .
FROM denoland/deno:2.9.6

WORKDIR /app
COPY deno.json deno.lock ./
COPY shared ./shared
COPY router ./router
# Only the router's dependencies: it never imports onnxruntime-node (tests check the graph).
RUN deno install --entrypoint router/main.ts && deno cache router/main.ts

# State lives in a KV file under /data or, for several replicas, behind state.kv's URL.
RUN mkdir -p /data && chown deno:deno /data
USER deno
EXPOSE 8080
# No subprocess permission: the `local` pre-warm scaler is for one machine, not a fleet.
ENTRYPOINT ["deno", "run", "--allow-net", "--allow-env", "--allow-read=/app,/etc/switchyard", "--allow-write=/data", "router/main.ts"]
CMD ["--config", "/etc/switchyard/switchyard.yaml"]
