#!/usr/bin/env bash
# false-failure rate: ~0 (why: share_error is 0.0006 to 0.0026 on the base and
# 0.4985 to 0.5024 planted in every documented run (docs/planted-regressions.md):
# the samples cannot overlap, so 4 v 4 always separate completely, p 0.029 ≤
# alpha 0.05 (repeat 4, one look), and the estimate (~0.5) is 10 times the
# threshold 0.05. Only runs that do not finish could fail it, not statistics.)
# Planted regression (docs/planted-regressions.md): tests/planted/fair-weight-ignored.patch
# sizes every group entity against its parent's shares, so cpu.weight still
# reads back what was written but sibling groups weigh the same. Submitted as
# a user would, from outside the repository: `schedlab test --suite fair
# --repeat 4` (the suite gives uid 1000 cpu_share 2048 and uid 1001 1024).
# It must fail (exit 1) with 'share_error' regressed and named in the reasons.
# Boots 8 guests (share and slice, about 35 s each) and builds one kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test fair-weight-ignored fair 4
planted_expect_fail share_error
