#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md): tests/planted/deadlock.patch
# takes the target runqueue's lock a second time in push_rt_task(); the guest
# boots and hangs at the first RT push, i.e. as soon as rt-migrate-test runs.
# Submitted as a user would, from outside the repository: `schedlab test
# --suite rt --repeat 1`. It must fail (exit 1) with a run of the patched
# kernel 'hung' and named in the reasons. Costs one baseline run and one run
# deadline (90 s boot allowance + 90 s workload timeout + 5 s), about 4 min
# with the build.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test deadlock rt 1
planted_expect_fail hung
