#!/usr/bin/env bash
# Cold registry starts against the decoder's test files (issue 12: the writer-schema lookup once timed out on a
# cold Apicurio). Each cycle starts a PRIVATE Apicurio (own STACK_DIR and ports, Kafka and Redis of the running
# stack reused), runs the two encoding round-trip test files against it as soon as it answers, then stops it.
#
#   bash scripts/registry-cold-start.sh [cycles]     (default 10; the local stack must be up: scripts/stack.sh up)
#
# Prints one line per cycle (registry start time, test result, load average); exits 1 if any cycle failed.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CYCLES="${1:-10}"
eval "$(bash scripts/stack.sh env)"
export STACK_DIR="$ROOT/.stack/registry-cold" STACK_REGISTRY_PORT=28081 STACK_REGISTRY_MGMT_PORT=29000
export STACK_KAFKA_PORT="${KAFKA_BROKERS##*:}" STACK_REDIS_PORT="${REDIS_URL##*:}"
failed=0
for i in $(seq 1 "$CYCLES"); do
  rm -rf "$STACK_DIR"
  s=$SECONDS
  if ! bash scripts/stack.sh up >"$ROOT/.stack/registry-cold.log" 2>&1; then
    echo "cycle $i: the private registry did not start (see .stack/registry-cold.log)"; failed=1; continue
  fi
  u=$((SECONDS - s))
  out="$(SCHEMA_REGISTRY_URL="http://127.0.0.1:28081/apis/ccompat/v7" npx vitest run \
    test/integration/output/encoding/round-trip.test.ts test/integration/output/encoding/simulator-round-trip.test.ts 2>&1)"
  rc=$?
  echo "cycle $i: registry up in ${u} s; tests rc=$rc in $((SECONDS - s - u)) s; load $(cut -d' ' -f1 /proc/loadavg);" \
    "$(grep -E 'Tests ' <<<"$out" | sed 's/\x1b\[[0-9;]*m//g' | xargs)"
  if [[ $rc != 0 ]]; then failed=1; grep -iE 'error|fail' <<<"$out" | head -5; fi
  bash scripts/stack.sh down >/dev/null 2>&1
done
rm -rf "$STACK_DIR"
exit $failed
