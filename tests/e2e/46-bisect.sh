#!/usr/bin/env bash
# timeout: 2700
# false-failure rate: 0 (why: the culprit is a build break, deterministic,
# and the two measured steps, comment-only prefixes at a fixed 2 runs a
# side, can only be inconclusive: 2 v 2 runs cannot reach p <= alpha, so
# no step can come out regressed. Inconclusive counts good, as the test
# asserts; the decided-good path (certain) is unit-tested in
# test_bisection, and decided steps on real guests are e2e 73's.)
# schedlab test bisects a failing series on its verdict (docs/testing-your-patch.md
# "Which patch did it"), submitted as a user would from outside the repository
# with `--suite rt --repeat 2`: a series of three patches, the planted
# comment-only patch (tests/planted/), a second comment-only patch and a patch
# that does not compile. The series fails (exit 1, the candidate does not
# build); the bisection measures the first patch, then the first two, against
# the same base (each inconclusive at 2 runs a side, which counts good), the
# second step reusing the first step's base runs, and names patch 3 of 3.
# The culprit is a build break so the answer is the same on a loaded host.
# Builds two kernels (the first is e2e 45's comment-only kernel when cached)
# and boots 6 guests. It ran at 5:8 until 2026-12-07 (15 boots, 297 s in
# make check): the more rounds bought no assertion, as the steps' verdicts
# were accepted either way.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"
cp "$E2E_ROOT/tests/planted/comment-only.patch" 1.patch
cat >2.patch <<'PATCH'
--- a/kernel/sched/rt.c
+++ b/kernel/sched/rt.c
@@ -7,6 +7,7 @@
 int sched_rr_timeslice = RR_TIMESLICE;
 /* More than 4 hours if BW_SHIFT equals 20. */
 static const u64 max_rt_runtime = MAX_BW;
+/* schedlab e2e 46: a second comment-only patch; it changes nothing. */
 
 static int do_sched_rt_period_timer(struct rt_bandwidth *rt_b, int overrun);
 
PATCH
cat >3.patch <<'PATCH'
--- a/kernel/sched/rt.c
+++ b/kernel/sched/rt.c
@@ -3,6 +3,7 @@
  * Real-Time Scheduling Class (mapped to the SCHED_FIFO and SCHED_RR
  * policies)
  */
+#error planted build failure
 
 int sched_rr_timeslice = RR_TIMESLICE;
 /* More than 4 hours if BW_SHIFT equals 20. */
PATCH
start=$(date +%s)
set +e
"$SCHEDLAB" test --suite rt --repeat 2 1.patch 2.patch 3.patch -o result.json --report report.html >out.txt
rc=$?
set -e
cat out.txt
echo "schedlab test exited $rc after $(($(date +%s) - start))s"
[ "$rc" = 1 ] || e2e_fail "a series that does not build must fail (exit 1), not $rc"
"$SCHEDLAB" validate --result result.json
"$E2E_ROOT/tests/tools/check-schema.py" result result.json
python3 - result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["kernels"]["patched"]["build"]["status"] == "build_failed", r["kernels"]["patched"]["build"]
b = r.get("bisection")
assert b, "the result has no bisection"
print(json.dumps({k: b[k] for k in ("status", "first_bad", "first_bad_patch", "certain", "builds", "boots")}))
assert b["status"] == "found", b["status"]
assert b["first_bad"] == 3, f"first bad patch {b['first_bad']}, expected 3 (the build break)"
assert b["first_bad_patch"] == "3.patch", b["first_bad_patch"]  # a plain diff keeps its file name
steps = b["steps"]
assert [s["patches"] for s in steps] == [1, 2], steps
# 2 v 2 runs give no bounded interval and cannot reach alpha: each step is
# inconclusive, counted good and marked uncertain, so the answer is not certain.
for s in steps:
    assert s["verdict"] == "inconclusive", s
    assert s["uncertain"] is True, s
    assert s["boots"] > 0, s
assert b["certain"] is False, b["certain"]
# The second step reuses the first step's base runs: it boots only its candidate
# (and base rounds beyond the first step's, if it needs more).
assert steps[0]["reused_runs"] == 0, steps[0]
assert steps[1]["reused_runs"] >= 2, steps[1]
assert b["boots"] == sum(s["boots"] for s in steps)
PY
grep -q "Bisection of the 3 patches" out.txt || e2e_fail "the summary does not print the bisection"
grep -q "first failing patch: 3 of 3" out.txt || e2e_fail "the summary does not name patch 3"
grep -q '<section id="bisection">' report.html || e2e_fail "the report has no bisection section"
# --no-bisect keeps a failing series' answer to the series alone (dry: the
# option parses and the job is the same).
"$SCHEDLAB" test --no-bisect --dry-run 1.patch 2.patch 3.patch >/dev/null
echo "bisect: ok"
