#!/usr/bin/env bash
# The planted suite's control (docs/planted-regressions.md):
# tests/planted/comment-only.patch adds a comment to kernel/sched/rt.c, so its
# kernel schedules exactly as the base does. Submitted as a user would, from
# outside the repository: `schedlab test --suite rt --repeat 4`. It must pass
# (exit 0): an A/A comparison through the patch path. Inconclusive (exit 3)
# fails this test: with push on, both kernels show 0 or 1 inversions per run,
# which the one-inversion threshold decides at 4 runs a side; exit 3 means
# the host starved the guests (the reasons say which runs were left out).
# Boots 8 guests; its kernel is the one tests/e2e/16-user-patch-run.sh builds.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test comment-only rt 4
planted_expect_pass
