#!/usr/bin/env bash
# `npm run demo`: the main job on the embedded default upstream.
#   local stack (Kafka, schema registry, Redis; or KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL when set)
#   -> simulator (scale small) -> schemas registered + topics created -> workers -> backfill of all six resources
#   -> verify every topic against the simulator's truth -> summary table. Exits 1 if any record is missing.
# Extra arguments go to `gamedata demo` (e.g. `npm run demo -- --faults 5xx=0.05,reset=0.01,malformed=0.002`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# A fresh machine: install what is missing (apt packages, node_modules) first.
source scripts/ensure-deps.sh
ensure_deps
if [[ -z "${KAFKA_BROKERS:-}${SCHEMA_REGISTRY_URL:-}${REDIS_URL:-}" ]]; then
  eval "$(bash scripts/stack.sh up)"
fi
# --warehouse: Kafka Connect + PostgreSQL too (CONNECT_URL / WAREHOUSE_URL, else the local stack's)
if [[ " $* " == *" --warehouse "* && -z "${CONNECT_URL:-}${WAREHOUSE_URL:-}" ]]; then
  eval "$(bash scripts/stack.sh up --with warehouse | grep -E '^export (CONNECT_URL|WAREHOUSE_URL)=')"
fi
# --lakehouse: the Iceberg sink's Connect worker, the catalog and PyIceberg too (LAKEHOUSE_CONNECT_URL, ICEBERG_*)
if [[ " $* " == *" --lakehouse "* && -z "${LAKEHOUSE_CONNECT_URL:-}${ICEBERG_CATALOG_URI:-}" ]]; then
  eval "$(bash scripts/stack.sh up --with lakehouse | grep -E '^export (CONNECT_URL|WAREHOUSE_URL|LAKEHOUSE_CONNECT_URL|ICEBERG_[A-Z_]+)=')"
fi
echo "demo: Kafka $KAFKA_BROKERS, schema registry $SCHEMA_REGISTRY_URL, Redis $REDIS_URL" >&2
exec npx tsx src/app/cli/main.ts demo "$@"
