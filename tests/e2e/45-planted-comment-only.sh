#!/usr/bin/env bash
# The planted suite's control (docs/planted-regressions.md):
# tests/planted/comment-only.patch adds a comment to kernel/sched/rt.c, so its
# kernel schedules exactly as the base does. Submitted as a user would, from
# outside the repository: `schedlab test --suite rt --repeat 5:8`. It must
# pass (exit 0): an A/A comparison through the patch path. Inconclusive
# (exit 3) fails this test. At 4 runs a side it did happen on a quiet host:
# inversions [0,0,0,1] against [0,0,0,2] give the bootstrap interval [-1, 2],
# which does not rule out a change beyond the one-inversion threshold. With 5
# runs a side, and 8 when the first 5 do not decide, one stray run no longer
# decides the interval; exit 3 then means the host starved the guests (the
# reasons say which runs were left out), and a check that cannot tell an A/A
# apart is not a pass. Boots 10 guests (16 at most); its kernel is the one
# tests/e2e/16-user-patch-run.sh builds.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test comment-only rt 5:8
planted_expect_pass
