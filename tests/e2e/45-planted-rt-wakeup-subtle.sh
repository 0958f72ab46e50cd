#!/usr/bin/env bash
# Planted regression (docs/planted-regressions.md): tests/planted/rt-wakeup-subtle.patch
# spins 40 us with the runqueue lock held on every RT wakeup: cyclictest's
# average wakeup latency goes up by about a third (about 110 -> 150 us on a
# TCG guest), the size of change scheduler developers quote as a patch's
# effect, far from the doubling the old 50 % gates needed. Submitted as a
# user would, from outside the repository, with the default adaptive
# repeats: `schedlab test --suite latency PATCH` (5 runs a side, more while
# a gate is undecided, up to 20). It must fail (exit 1) with
# `latency_us.avg` regressed and named in the reasons.
# false-failure rate: not shown <= 1/1000 (why: bench/verdict_resample on the
#   2026-12-07 latency pool's 24 quiet A/A runs, the candidate's avg and p99
#   plus 40 us, missed 0 of 2000 jobs at 5:20, 10 runs a side on average;
#   2000 replays bound a miss only to 0.15 % (one-sided 95 %). On a host busy
#   enough to inflate guest latencies while the vCPUs barely wait, one make
#   check came out inconclusive; such rounds are now marked noisy by the
#   others' share and rerun (compare/noise.h); docs/testing.md.)
# Boots 10 to 40 guests (cyclictest, about 9 s each) and builds one kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test rt-wakeup-subtle latency 5:20
planted_expect_fail 'latency_us.avg'
