#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md): tests/planted/rt-wakeup-latency.patch
# spins up to 500 us with the runqueue lock held on every RT wakeup, waiting
# for a push that cannot land. Submitted as a user would, from outside the
# repository: `schedlab test --suite latency --repeat 5:8` (5 runs a side, 8
# if those do not decide). It must fail (exit 1) with a cyclictest latency
# gate (latency_us.avg or .p99) regressed and named in the reasons. Boots 10
# guests (cyclictest, about 20 s each) and builds one kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test rt-wakeup-latency latency 5:8
planted_expect_fail 'latency_us.*'
