#!/usr/bin/env bash
# timeout: 2700
# false-failure rate: not shown ≤ 1/1000 (why: two parts. (1) Detection under
# load: measured once, one boot a side (loaded avg +86 % against an A/A
# spread of +57 %, docs/planted-regressions.md), too little for a rate; the
# repeat is widened from a fixed 5 to 5:8 so an undecided loaded gate gets 3
# more rounds instead of failing: about 6 boots, ~6 min of CI under TCG,
# where the idle p99 gate usually keeps the job going to 8. (2) The idle
# cyclictest must not regress: bench/verdict_resample on the 2026-12-07
# latency pool (24 A/A runs) gave false regressions of the idle p99 in 19 of
# 3000 jobs at 5:8 (33 at the old fixed 5) and of the avg in 3 (12 at 5).
# So the idle check is on latency_us.avg only, 0.1 % (≤ 0.35 % one-sided
# 95 %): the avg is what an idle-visible RT latency plant moves (the
# rt-wakeup-latency plant: 3000 of 3000). The ≥ 4-CPU latency-suite job
# asserts "no gate regressed" (p99 included, ~0.7 %), but does not run in CI.)
# Planted regression (docs/planted-regressions.md): tests/planted/rt-preempt-busy.patch
# defers the preemption of a running fair task by a woken RT task to the
# fair task's next tick; a wakeup on an idle CPU preempts the idle task as
# before. So on an idle guest nothing changes and `schedlab test --suite
# latency` does not see it (no gated metric regressed: pass, or inconclusive
# where cyclictest's p99 cannot be shown unchanged at 5 to 8 runs), while
# `schedlab test` with no --suite (the default
# suite, which includes under-load: cyclictest while hackbench and burn keep
# every CPU busy) fails it on a latency gate of a workload under load.
# Builds one kernel and boots 10 to 16 guests (5 to 8 rounds of the default
# suite, a minute a boot under TCG), and 10 to 16 more for the latency suite on a
# host of 4 CPUs or more.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$E2E_ROOT/tests/planted/planted.sh"
# The default suite's idle part is the latency suite's cyclictest with its
# gates, in the same boots: planted_expect_regressed_in below fails if any
# idle gate regressed. The separate `--suite latency` job (16 boots, about
# 150 s) runs where the host has 4 CPUs or more; on the 2-CPU CI machine
# its time is what keeps the suite inside CI's limit.
if [ "$(nproc)" -ge 4 ]; then
	planted_test rt-preempt-busy latency 5:8
	planted_expect_not_regressed
fi
planted_test rt-preempt-busy default 5:8
planted_expect_fail 'latency_us.*'
# The idle check on the average alone: the idle p99 regresses falsely in
# 0.6 % of A/A jobs at 5:8 (the header), the average in 0.1 %.
planted_expect_regressed_in '*-loaded' 'latency_us.*' 'latency_us.avg'
# The result carries the loads' throughput beside the latency: a gated
# comparison of each load's rate, with values on both sides.
python3 - "$PLANTED_DIR/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for w, m in (("hackbench-load", "loops_per_s"), ("burn-load", "ops_per_s")):
    c = [c for c in r["comparisons"] if c["variant"] == "patched" and c["workload"] == w
         and c["metric"] == m]
    assert c and c[0]["gated"], (w, m, c)
    assert c[0]["baseline"]["n"] >= 1 and c[0]["candidate"]["n"] >= 1, c[0]
    print(f"{w} {m}: median {c[0]['baseline']['median']} -> {c[0]['candidate']['median']}, {c[0]['verdict']}")
PY
