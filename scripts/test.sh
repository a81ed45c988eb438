#!/usr/bin/env bash
# `npm test`: every vitest project (unit, upstream, services) against real Kafka, schema registry and Redis.
#   - KAFKA_BROKERS / SCHEMA_REGISTRY_URL / REDIS_URL set: those services are used as they are;
#   - else, with a Docker engine: the global setup starts containers (testcontainers);
#   - else: the local stack (scripts/stack.sh up; reused when already running, left running for the next run).
# Extra arguments go to `vitest run` (e.g. `npm test -- --project unit`).
# Under CI=true, a skipped or todo integration test fails the run: CI must never go green without the services.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# A fresh machine: install what is missing (apt packages, node_modules) first.
source scripts/ensure-deps.sh
ensure_deps

# Folders of src/ must not import each other in a cycle (dependencies point down the data flow).
node scripts/check-cycles.mjs

if [[ -z "${KAFKA_BROKERS:-}${SCHEMA_REGISTRY_URL:-}${REDIS_URL:-}" ]] \
  && ! { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }; then
  eval "$(bash scripts/stack.sh up)"
fi

if [[ "${CI:-}" != true ]]; then
  exec npx vitest run "$@"
fi

report=".vitest-report.json"
rm -f "$report" .vitest-failures.txt
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?
node scripts/check-no-skips.mjs "$report" .vitest-failures.txt || { [[ $status -ne 0 ]] || status=1; }
exit $status
