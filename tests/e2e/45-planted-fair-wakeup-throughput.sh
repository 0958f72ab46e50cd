#!/usr/bin/env bash
# false-failure rate: not shown (why: the 400 us plant has not been measured
# in a guest; the 100 us version moved loops_per_s -26 %, within the spread
# of two boots (docs/planted-regressions.md). The adaptive max is widened 8 ->
# 12 so an undecided gate gets 8 more boots (~8 min under load) rather than
# failing. It runs only on hosts of 4 CPUs or more, so it is skipped in CI and
# adds nothing to the suite's rate there; measure it before counting on it.)
# Planted regression (docs/planted-regressions.md):
# tests/planted/fair-wakeup-throughput.patch spins 400 us in every wakeup of
# a fair task (select_task_rq_fair), a path RT tasks never take. The
# under-load suite must fail it on the load's throughput, hackbench-load's
# loops_per_s, named in the reasons. Builds one kernel, boots 10 or more
# guests.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
# Runs where the host has 4 CPUs or more. On the 2-CPU CI machine its 10 or
# more under-load boots (about a minute each under TCG) would take the suite
# past CI's time limit beside the busy-CPU plant (45-planted-rt-preempt-busy),
# which runs the same loads in the default suite there; the throughput gates
# themselves are checked on every host by that test's result and the unit
# tests of the load metrics.
e2e_need_cpus 4 "its 10 or more under-load boots do not fit CI's time on a 2-CPU host"
planted_test fair-wakeup-throughput under-load 5:12
planted_expect_fail 'loops_per_s'
planted_expect_regressed_in 'hackbench-load' 'loops_per_s'
