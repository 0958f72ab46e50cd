#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic: 20 seeded nights; the change-point
# permutation test runs with a fixed seed, so the answer replays exactly).
# The nightly trend report from a store: build a schedlab.db with the
# store's comparisons table and 20 synthetic nights (a p99 regression that
# starts on night 12 and lasts three nights, one row older than the window),
# run `schedlab trend --state DIR --since 30d`, and check the regression list,
# the charts, the window and the errors. When Chromium is installed, also load
# the page and count the charts in its DOM.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need python3
e2e_tmpdir
cd "$E2E_TMP"
mkdir state

python3 - state/schedlab.db <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
db.execute("""CREATE TABLE comparisons(job_id TEXT, job_name TEXT, finished_at TEXT,
  variant TEXT, workload TEXT, metric TEXT, baseline_median REAL, candidate_median REAL,
  change REAL, ci_lo REAL, ci_hi REAL, p_value REAL, verdict TEXT)""")
now = int(time.time())
def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
for night in range(20):
    t = now - (20 - night) * 86400
    reg = 12 <= night < 15
    for metric, base, cand, verdict in (
            ("latency_us.p99", 800 + night, 1100 + night if reg else 790 + night,
             "regressed" if reg else "unchanged"),
            ("latency_us.avg", 200, 198, "unchanged")):
        db.execute("INSERT INTO comparisons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (f"job-{night}", "nightly-push", iso(t), "patched", "cyclictest", metric,
                    base, cand, cand - base, cand - base - 25, cand - base + 25, 0.03, verdict))
    db.execute("INSERT INTO comparisons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
               (f"job-{night}", "nightly-push", iso(t), "patched", "rt-migrate-test",
                "inversions", 4, 0, -4, -5, -3, 0.01, "improved"))
db.execute("INSERT INTO comparisons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
           ("job-old", "nightly-push", iso(now - 45 * 86400), "patched", "cyclictest",
            "latency_us.max", 1, 2, 1, 0, 2, 0.5, "regressed"))
db.commit()
print(f"first regression night: {iso(now - 8 * 86400)[:10]}")
PY
first=$(date -u -d "@$(($(date +%s) - 8 * 86400))" +%Y-%m-%d)

"$SCHEDLAB" trend --state state --since 30d -o trend.html
rows=$(grep -o '<tr><td>[0-9-]* [0-9:]*</td><td>nightly-push</td>' trend.html | wc -l)
[ "$rows" -eq 1 ] || e2e_fail "expected 1 regression in the list, found $rows"
grep -q "<tr><td>$first " trend.html || e2e_fail "the regression is not listed on $first"
charts=$(grep -o '<svg ' trend.html | wc -l)
[ "$charts" -eq 3 ] || e2e_fail "expected 3 charts (p99, avg, inversions), found $charts"
grep -q 'latency_us.max' trend.html && e2e_fail "a row older than the window was shown"

"$SCHEDLAB" trend --state state --since 60d -o trend60.html
[ "$(grep -o '<svg ' trend60.html | wc -l)" -eq 4 ] || e2e_fail "the 60-day window lacks the old row"

# Errors are whole sentences and exit 2.
set +e
"$SCHEDLAB" trend --state nowhere --since 30d -o x.html 2>err.txt
rc=$?
set -e
[ "$rc" -eq 2 ] || e2e_fail "a missing store exited $rc, not 2"
grep -q "The store 'nowhere/schedlab.db' does not exist." err.txt || e2e_fail "message: $(cat err.txt)"
set +e
"$SCHEDLAB" trend --state state --since 30x 2>err.txt
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "not a duration" err.txt || e2e_fail "a bad --since: exit $rc, $(cat err.txt)"

if command -v chromium >/dev/null 2>&1; then
	e2e_chromium --dump-dom "file://$PWD/trend.html" >dom.html
	dom=$(grep -o '<svg ' dom.html | wc -l)
	[ "$dom" -eq 3 ] || e2e_fail "Chromium's DOM has $dom charts, expected 3"
	echo "Chromium DOM: $dom charts"
fi
echo "trend: 1 regression listed on $first, $charts charts"
