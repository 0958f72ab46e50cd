#!/usr/bin/env bash
# schedlab test bisects a failing series on its verdict (docs/testing-your-patch.md
# "Which patch did it"): a series of two patches, the planted comment-only
# patch then the planted rt-placement regression (tests/planted/), submitted
# as a user would from outside the repository with `--suite rt --repeat 5:8`.
# The series fails (exit 1); the bisection measures the first patch alone
# against the same base, reusing the base's runs, and names patch 2 of 2.
# Builds two kernels (one is the planted comment-only kernel when e2e 45 has
# cached it) and boots about 15 guests.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"
cp "$E2E_ROOT/tests/planted/comment-only.patch" 1.patch
cp "$E2E_ROOT/tests/planted/rt-placement.patch" 2.patch
start=$(date +%s)
set +e
"$SCHEDLAB" test --suite rt --repeat 5:8 1.patch 2.patch -o result.json --report report.html >out.txt
rc=$?
set -e
cat out.txt
echo "schedlab test exited $rc after $(($(date +%s) - start))s"
[ "$rc" = 1 ] || e2e_fail "a series with a planted regression must fail (exit 1), not $rc"
"$SCHEDLAB" validate --result result.json
"$E2E_ROOT/tests/tools/check-schema.py" result result.json
python3 - result.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
b = r.get("bisection")
assert b, "the result has no bisection"
print(json.dumps({k: b[k] for k in ("status", "first_bad", "first_bad_patch", "certain", "builds", "boots")}))
assert b["status"] == "found", b["status"]
assert b["first_bad"] == 2, f"first bad patch {b['first_bad']}, expected 2 (the planted regression)"
assert "keep-an-RT-task" in b["first_bad_patch"] or b["first_bad_patch"].startswith("0002-"), b["first_bad_patch"]
steps = b["steps"]
assert len(steps) == 1 and steps[0]["patches"] == 1, steps
s = steps[0]
assert s["verdict"] in ("pass", "inconclusive"), s["verdict"]
assert s["uncertain"] == (s["verdict"] != "pass")
assert b["certain"] == (s["verdict"] == "pass")
# The base's runs of the series job are reused: the step boots only its candidate.
assert s["reused_runs"] >= 5, s
base = r["job"]["baseline"]
assert s["boots"] <= 8 + max(0, 8 - s["reused_runs"]), s
PY
grep -q "Bisection of the 2 patches" out.txt || e2e_fail "the summary does not print the bisection"
grep -q "first failing patch: 2 of 2" out.txt || e2e_fail "the summary does not name patch 2"
grep -q '<section id="bisection">' report.html || e2e_fail "the report has no bisection section"
# --no-bisect keeps a failing series' answer to the series alone (dry: the
# option parses and the job is the same).
"$SCHEDLAB" test --no-bisect --dry-run 1.patch 2.patch >/dev/null
echo "bisect: ok"
