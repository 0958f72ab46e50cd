#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md): tests/planted/rt-placement.patch
# makes find_lowest_rq() return the task's own CPU whenever its affinity
# allows, so neither push nor wakeup placement moves a waiting RT task to a
# CPU running a lower-priority one. Submitted as a user would, from outside
# the repository: `schedlab test --suite rt --repeat 5:8` (5 runs a side, 8 if
# those do not decide). It must fail (exit 1) with the gated metric
# 'inversions' regressed and named in the reasons. Boots 10 guests
# (rt-migrate-test, about 30 s each) and builds one kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test rt-placement rt 5:8
planted_expect_fail inversions
