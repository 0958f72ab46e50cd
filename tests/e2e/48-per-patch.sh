#!/usr/bin/env bash
# schedlab test --per-patch says what each patch of a series did
# (docs/testing-your-patch.md "What each patch did"), submitted as a user
# would from a directory outside the repository: a series of two patches,
# the planted comment-only patch (tests/planted/: it changes nothing) and the
# planted RT placement regression on top (find_lowest_rq() keeps the task's
# own CPU). Every prefix is measured against the same base with 5 runs a
# side (the second prefix is the whole series), and each patch's own change
# is its prefix against the one before: patch 1 must not carry a decided
# change in the gated `inversions`, patch 2 must carry it (regressed), and
# carried_by must name patch 2. The summary and the HTML report show it.
# Builds one kernel (comment-only + rt-placement; the comment-only kernel is
# e2e 45-planted-comment-only's, cached) and boots 15 guests: the base and
# the whole series 5 each, the first prefix 5 (the base's runs reused).
# Time here: see the closing note of the change that added it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"
cp "$E2E_ROOT/tests/planted/comment-only.patch" 1-comment.patch
cp "$E2E_ROOT/tests/planted/rt-placement.patch" 2-placement.patch
start=$(date +%s)
set +e
"$SCHEDLAB" test --suite rt --repeat 5 --per-patch 1-comment.patch 2-placement.patch \
	-o result.json --report report.html >out.txt
rc=$?
set -e
cat out.txt
echo "schedlab test --per-patch exited $rc after $(($(date +%s) - start))s"
[ "$rc" = 1 ] || e2e_fail "the series carries the planted regression: exit 1 expected, not $rc"
"$SCHEDLAB" validate --result result.json
"$E2E_ROOT/tests/tools/check-schema.py" result result.json
python3 - result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert "bisection" not in r, "--per-patch replaces the bisection"
a = r.get("attribution")
assert a, "the result has no attribution"
print(json.dumps({k: a[k] for k in ("status", "patches", "builds", "boots", "carried_by")}))
assert a["status"] == "done", a["status"]
assert a["patches"] == 2
steps = a["steps"]
assert [s["patches"] for s in steps] == [1, 2], steps
def own(step):
    c = [x for x in step["added"] if x["metric"] == "inversions"]
    assert len(c) == 1, step["added"]
    return c[0]
first, second = own(steps[0]), own(steps[1])
print("patch 1:", first)
print("patch 2:", second)
assert first["verdict"] not in ("regressed", "improved"), f"patch 1 changes nothing: {first}"
assert second["verdict"] == "regressed", f"patch 2 is the planted regression: {second}"
assert second["to"] > second["from"], second
by = [c for c in a["carried_by"] if c["metric"] == "inversions"]
assert len(by) == 1 and by[0]["patches"] == 2 and by[0]["last_patch"] == "2-placement.patch", a["carried_by"]
# the first prefix booted only its candidate: the base's runs were reused
assert steps[0]["reused_runs"] >= 5, steps[0]
assert steps[0]["boots"] >= 5, steps[0]
PY
grep -q "What each patch did (2 patches" out.txt || e2e_fail "the summary does not print the attribution"
grep -q "inversions: regressed by patch 2 (2-placement.patch)" out.txt ||
	e2e_fail "the summary does not name patch 2 as carrying the inversions"
grep -q '<section id="attribution">' report.html || e2e_fail "the report has no attribution section"
echo "per-patch attribution ok"
