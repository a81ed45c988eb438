#!/usr/bin/env bash
# `npm run demo`: the main job on the embedded default.
# For now: bring the local stack up (or use KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL when set) and run
# the smoke flow against it (Avro record through the registry and Kafka; BullMQ jobs through Redis).
# The backfill issue replaces this body with the full simulator -> Kafka demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund >&2
if [[ -z "${KAFKA_BROKERS:-}${SCHEMA_REGISTRY_URL:-}${REDIS_URL:-}" ]]; then
  eval "$(bash scripts/stack.sh up)"
fi
echo "demo: Kafka $KAFKA_BROKERS, schema registry $SCHEMA_REGISTRY_URL, Redis $REDIS_URL" >&2
exec npx vitest run --project services --reporter=verbose test/integration/smoke
