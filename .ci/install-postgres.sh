#!/usr/bin/env bash
# Install PostgreSQL (Debian's postgresql package) for the shared-store tests, which start their own
# server in a temporary folder (tests/postgres_server.py). Idempotent: does nothing when initdb is
# present. Needs root or sudo. SEARCHTRACE_TEST_POSTGRES points the tests at an existing server instead.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends postgresql
