#!/usr/bin/env bash
# tier: host
# Static analysis stays clean: cppcheck over service/ and workloads/ with the
# flags of `make lint`. A new finding fails the check; a false positive is
# suppressed at the spot (// cppcheck-suppress ID) or in the Makefile, with
# the reason next to it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$E2E_ROOT"
e2e_need cppcheck
make --no-print-directory lint
