#!/usr/bin/env bash
# false-failure rate: ≤ 1/1000, 0 of 5000 replayed (why: the test fails when
# the plant is not `regressed`. bench/verdict_resample replayed jobs through
# the production rule from the 70 candidate and 148 A/A runs
# docs/statistics.md and docs/planted-regressions.md print for the quiet host
# (12 planted jobs, inversions 0 to 13 against 0 to 7): at 5:8 12000 jobs
# missed 43 (0.36 %), at 5:12 5000 missed 2 (0.04 %, ≤ 0.13 % one-sided 95 %),
# at 5:16 5000 missed none (≤ 0.06 %); so 5:16 (looks 5, 8, 12, 16 at p ≤
# 0.0125). Cost: 6.0 runs a side on average in the replay against 5.4 at 5:8,
# about one boot (~30 s) a job; up to 16 more boots in a job that stays
# undecided.)
# Planted regression (docs/planted-regressions.md): tests/planted/rt-placement.patch
# makes find_lowest_rq() return the task's own CPU whenever its affinity
# allows, so neither push nor wakeup placement moves a waiting RT task to a
# CPU running a lower-priority one. Submitted as a user would, from outside
# the repository: `schedlab test --suite rt --repeat 5:16` (5 runs a side,
# then 8, 12 and 16 while those do not decide). It must fail (exit 1) with the gated metric
# 'inversions' regressed and named in the reasons. Boots 10 guests
# (rt-migrate-test, about 30 s each) and builds one kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
planted_test rt-placement rt 5:16
planted_expect_fail inversions
