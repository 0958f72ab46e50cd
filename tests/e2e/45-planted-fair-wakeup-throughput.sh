#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md):
# tests/planted/fair-wakeup-throughput.patch spins 400 us in every wakeup of
# a fair task (select_task_rq_fair), a path RT tasks never take. The
# under-load suite must fail it on the load's throughput, hackbench-load's
# loops_per_s, named in the reasons. Builds one kernel, boots 10 or more
# guests.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
# Under load every vCPU of the 2-vCPU guest is busy: on a host with fewer
# than 4 CPUs its vCPUs wait about half of each run for a host CPU, every
# run is noisy and the verdict inconclusive (docs/workloads.md, "Loads").
e2e_need_cpus 4 "a 2-vCPU guest under load; with fewer, every loaded run is noisy"
planted_test fair-wakeup-throughput under-load 5:8
planted_expect_fail 'loops_per_s'
planted_expect_regressed_in 'hackbench-load' 'loops_per_s'
