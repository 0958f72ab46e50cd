#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md): tests/planted/rt-preempt-busy.patch
# defers the preemption of a running fair task by a woken RT task to the
# fair task's next tick; a wakeup on an idle CPU preempts the idle task as
# before. So on an idle guest nothing changes and `schedlab test --suite
# latency` passes it, while `--suite under-load` (cyclictest while hackbench
# and burn keep every CPU busy) fails it
# on a latency gate of a workload under load. Builds one kernel and boots
# 10 guests for the latency suite and 10 or more under load.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
# Under load every vCPU of the 2-vCPU guest is busy: on a host with fewer
# than 4 CPUs its vCPUs wait about half of each run for a host CPU, every
# run is noisy and the verdict inconclusive (docs/workloads.md, "Loads").
e2e_need_cpus 4 "a 2-vCPU guest under load; with fewer, every loaded run is noisy"
planted_test rt-preempt-busy latency 5:8
planted_expect_pass
planted_test rt-preempt-busy under-load 5:8
planted_expect_fail 'latency_us.*'
planted_expect_regressed_in '*-loaded' 'latency_us.*'
