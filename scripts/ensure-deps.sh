#!/usr/bin/env bash
# Installs what `npm run demo` and `npm test` need on a fresh Debian machine of this kind and is a no-op
# afterwards: Debian's redis-tools (the Redis 7 binary), Maven, curl, openssl and nginx-light (the secured stack),
# python3-venv (the lakehouse's PyIceberg venv)
# when missing (as root, or through sudo),
# under CI also Debian's prometheus (for promtool), and node_modules when missing. Sourced by scripts/demo.sh,
# scripts/test.sh and .ci/run.
set -euo pipefail

ensure_deps() {
  ensure_system_deps
  ensure_node_modules
}

# The Debian packages when missing.
ensure_system_deps() {
  local missing=()
  command -v redis-check-rdb >/dev/null 2>&1 || missing+=(redis-tools)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  # the secured stack (scripts/stack.sh up --secure; test/e2e/secured.test.ts): certificates and the registry's
  # TLS + basic-auth proxy
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
  # the lakehouse (scripts/stack.sh up --with lakehouse; test/e2e/lakehouse.test.ts): a venv for PyIceberg
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  # promtool (Debian's prometheus package) runs the alert rules' unit tests (ops/prometheus); CI must have it,
  # a developer's `npm test` skips that one test without it.
  [[ -z "${CI:-}" ]] || command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  if ((${#missing[@]})); then
    local sudo=""
    [[ "$(id -u)" == 0 ]] || sudo="sudo"
    echo "[deps] apt-get install ${missing[*]}" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  fi
}

# node_modules when missing (.ci/run installs them while the stack starts).
ensure_node_modules() {
  if [[ ! -d node_modules ]]; then
    echo "[deps] installing node_modules" >&2
    # npm 11 may refuse a lock file that lacks other platforms' optional packages the registry does not serve
    # (npm/cli#4828); `npm install --no-save` then installs the same locked versions without rewriting it.
    # npm ci's refusal comes with npm's whole usage text: kept in a file, and only its first error line shown.
    local log
    log="$(mktemp)"
    if npm ci --no-audit --no-fund >"$log" 2>&1; then
      cat "$log" >&2
    else
      local why
      # The first error line that says something (not `code EUSAGE`, not blank), cut at its first sentence.
      why="$(sed -nE 's/^npm (error|ERR!) +//p' "$log" | grep -v -m1 -E '^(code |$)' | sed -E 's/\. .*/./' || true)"
      echo "[deps] npm ci refused (${why:-no reason given}); installing the locked versions with npm install --no-save" >&2
      npm install --no-save --no-audit --no-fund >&2
    fi
    rm -f "$log"
  fi
}
