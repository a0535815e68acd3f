#!/bin/bash
# Used for docs/results/logql-metric-queries.md (run from the repository root under the heavy lock).
# Starts the demo pool (router :18480, backends from :18491), sends 40 s of skewed traffic, runs two LogQL metric queries.
set -u
cd "$(dirname "$0")/../.."
export SWITCHYARD_ROUTER__PORT=18480 SWITCHYARD_POOL__BASE_PORT=18491 SWITCHYARD_LOG__DIR=/tmp/surf/logs
rm -rf /tmp/surf/logs
deno task start --status-file /tmp/surf/status.json > /tmp/surf/start.log 2>&1 &
PID=$!
for i in $(seq 1 120); do grep -q "Switchyard is up" /tmp/surf/start.log && break; sleep 1; done
deno task traffic --url http://localhost:18480 --mix skewed --duration 40 --rate 10 > /tmp/surf/traffic.log 2>&1
Q1='sum by (request_type) (count_over_time({service="router"} | json | msg="request" [20s]))'
Q2='quantile_over_time(0.99, {service="router"} | json | msg="request" | unwrap ms | __error__="" [20s]) by (request_type)'
for Q in "$Q1" "$Q2"; do
  echo "\$ deno task logs --url http://localhost:18480 --since 45s --step 10s '$Q'"
  deno task logs --url http://localhost:18480 --token-file data/admin_token --since 45s --step 10s "$Q" 2>&1 | grep -v "^.\[0m.\[32mTask"
  echo
done > /tmp/surf/logql_out.txt
kill -TERM $PID; wait $PID
