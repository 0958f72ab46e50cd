#!/usr/bin/env bash
# timeout: 2700
# false-failure rate: ≤ 1/1000, ≤ 0.05 % replayed (why: the culprit is a
# build break, deterministic. The two measured steps are comment-only A/A jobs
# at 5:8 (rt suite, gate inversions) and the test accepts pass or
# inconclusive for each (a false `improved` passes a gate), so only a false
# `regressed` can fail it: 0 of the 12000 A/A jobs 45-planted-comment-only's
# header replays at 5:8 (at most 0.025 % one-sided 95 %), two steps ≤ 0.05 %.)
# schedlab test bisects a failing series on its verdict (docs/testing-your-patch.md
# "Which patch did it"), submitted as a user would from outside the repository
# with `--suite rt --repeat 5:8`: a series of three patches, the planted
# comment-only patch (tests/planted/), a second comment-only patch and a patch
# that does not compile. The series fails (exit 1, the candidate does not
# build); the bisection measures the first patch, then the first two, against
# the same base (both pass, or stay inconclusive and count good), the second
# step reusing the first step's base runs, and names patch 3 of 3. The
# culprit is a build break so the answer is the same on a loaded host; the
# statistical steps are the comment-only prefixes. Builds two kernels (the
# first is e2e 45's comment-only kernel when cached) and boots 15 to 21
# guests: 528 s at host load 12 here, all kernels but the build break cached.
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
"$SCHEDLAB" test --suite rt --repeat 5:8 1.patch 2.patch 3.patch -o result.json --report report.html >out.txt
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
for s in steps:
    assert s["verdict"] in ("pass", "inconclusive"), s
    assert s["uncertain"] == (s["verdict"] != "pass"), s
    assert s["boots"] > 0, s
assert b["certain"] == all(s["verdict"] == "pass" for s in steps)
# The second step reuses the first step's base runs: it boots only its candidate
# (and base rounds beyond the first step's, if it needs more).
assert steps[0]["reused_runs"] == 0, steps[0]
assert steps[1]["reused_runs"] >= 5, steps[1]
assert b["boots"] == sum(s["boots"] for s in steps)
PY
grep -q "Bisection of the 3 patches" out.txt || e2e_fail "the summary does not print the bisection"
grep -q "first failing patch: 3 of 3" out.txt || e2e_fail "the summary does not name patch 3"
grep -q '<section id="bisection">' report.html || e2e_fail "the report has no bisection section"
# --no-bisect keeps a failing series' answer to the series alone (dry: the
# option parses and the job is the same).
"$SCHEDLAB" test --no-bisect --dry-run 1.patch 2.patch 3.patch >/dev/null
echo "bisect: ok"
