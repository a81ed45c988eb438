#!/usr/bin/env bash
# The 10-minute tail soak (issue 7's "nothing missing after 10 minutes of live traffic with faults on"):
# runs test/integration/pipeline/schedules/tail.test.ts with a 10-minute live window instead of 60 s, against the same real
# Kafka / registry / Redis as `npm test` (local stack unless KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL are set).
# Prints the test's own log (initial tail time, freshness samples, per-resource check, catch-up, status vs metrics).
# Usage: bash scripts/tail-soak.sh [minutes]   (default 10)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
minutes="${1:-10}"
if [[ -z "${KAFKA_BROKERS:-}${SCHEMA_REGISTRY_URL:-}${REDIS_URL:-}" ]] \
  && ! { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }; then
  eval "$(bash scripts/stack.sh up)"
fi
export TAIL_LIVE_MS=$((minutes * 60 * 1000))
exec npx vitest run --project services test/integration/pipeline/schedules
