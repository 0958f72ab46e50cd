#!/usr/bin/env bash
# false-failure rate: 0 from the statistics (verdicts are printed, never
# asserted: any exit but 2 is accepted; thresholds and noise limits are
# checked against the calibration's own numbers, deterministic arithmetic).
# `schedlab calibrate` end to end (docs/statistics.md, "A/A calibration"):
#  1. bad input is exit 2 with the option named;
#  2. --boots 3 of the built-in base kernel with one short rt-migrate-test
#     (10 loops) stores one calibration file under the cache, valid against
#     results-schema/calibration.schema.json, keyed by this host, the kernel
#     and the workload;
#  3. a job with the same kernel and workload run after it names that
#     calibration in result.calibration (key, made_at, boots, host), and its
#     comparisons of that workload say where their thresholds came from,
#     with the A/A spread; a threshold from calibration is never below the
#     default; its noise limit comes from the calibration runs' p90 vCPU
#     wait, and every run's noisy mark agrees with it and the others' share;
#  4. a job with its own noise_limit_pct keeps it.
# The calibration goes to a cache of its own (the kernels linked from the
# usual cache), so nothing here changes the thresholds of other jobs.
# Boots 4 + 4 + 2 TCG guests (more when the host makes runs noisy): about 3 min on a
# quiet host; 588 s measured with other sessions keeping the load at 15-21.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_need python3
e2e_tmpdir
cd "$E2E_TMP"

# 1. bad input
set +e
"$SCHEDLAB" calibrate --boots 2 >out 2>err
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- "--boots must be an integer from 3 to 50" err ||
	e2e_fail "--boots 2: exit $rc, $(cat err)"
set +e
"$SCHEDLAB" calibrate --workloads missing.json >out 2>err
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- "--workloads" err || e2e_fail "--workloads missing.json: exit $rc, $(cat err)"
"$SCHEDLAB" calibrate --help | grep -q "Usage: schedlab calibrate" || e2e_fail "calibrate --help"

# 2. calibrate into a cache of our own that shares the built kernels
usual=${SCHEDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab}
mkdir cache
for e in "$usual"/*; do
	[ "$(basename "$e")" = calibration ] || ln -s "$e" cache/
done
cat >wl.json <<'JSON'
{"workloads": [{"name": "rtm", "tool": "rt-migrate-test", "maxerr_us": 18000,
                "args": ["-p", "60", "-l", "10", "3"], "timeout_s": 60}]}
JSON
start=$(date +%s)
"$SCHEDLAB" calibrate --workloads wl.json --boots 3 --cache-dir cache --job-dir cal-job -q \
	>cal.out 2>cal.err || { cat cal.out cal.err; e2e_fail "schedlab calibrate exited $?"; }
echo "calibrate took $(($(date +%s) - start)) s"
grep -A20 '^calibration ' cal.out || true
files=(cache/calibration/*.json)
[ "${#files[@]}" -eq 1 ] && [ -f "${files[0]}" ] || e2e_fail "expected one calibration file, found: ${files[*]}"
"$E2E_ROOT/tests/tools/check-schema.py" calibration "${files[0]}" ||
	e2e_fail "the calibration file does not match calibration.schema.json"
python3 - "${files[0]}" "$(hostname)" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
assert os.path.basename(sys.argv[1]) == c["key"] + ".json", "file name is not the key"
assert c["boots"] == 3, c["boots"]
assert c["host"]["hostname"] == sys.argv[2], c["host"]
assert c["host"]["accel"] in ("kvm", "tcg")
assert c["workload"]["tool"] == "rt-migrate-test" and c["workload"]["args"][3] == "10"
inv = c["metrics"]["inversions"]
assert len(inv["values"]) >= 3 and inv["spread"] >= 0, inv
assert c["runs_used"] >= 3
w = c["vcpu_wait_pct_p90"]
assert isinstance(w, (int, float)) and 0 <= w <= 100, w
assert c["vcpu_wait_pct_median"] <= w + 1e-9, (c["vcpu_wait_pct_median"], w)
print("calibration:", c["key"][:12], "inversions", inv["values"], "spread", inv["spread"],
      "noisy runs included" if c.get("noisy_runs_included") else "clean runs")
PY

# 3. a job on the same kernel and workload picks it up
cat >job.json <<JSON
{"name": "after-calibration",
 "base": {"source": "debian:linux-source-6.1", "patches": [{"series": "linux-6.1"}],
          "config": {"builtin": "linux-6.1"}},
 "patches": [],
 "workloads": $(python3 -c 'import json; print(json.dumps(json.load(open("wl.json"))["workloads"]))'),
 "repeat": 2, "noise_policy": "keep"}
JSON
set +e
"$SCHEDLAB" run job.json --cache-dir cache --job-dir run-job -o result.json -q >run.out 2>run.err
rc=$?
set -e
[ "$rc" -ne 2 ] || { cat run.out run.err; e2e_fail "schedlab run exited 2"; }
"$SCHEDLAB" validate --result result.json >/dev/null || e2e_fail "the result does not validate"
"$E2E_ROOT/tests/tools/check-schema.py" result result.json || e2e_fail "result.schema.json"
python3 - result.json "${files[0]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
cal = r.get("calibration")
assert cal and len(cal) == 1, f"result.calibration: {cal}"
e = cal[0]
assert e["key"] == c["key"] and e["made_at"] == c["made_at"], e
assert e["boots"] == 3 and e["host"] == c["host"] and e["workload"] == "rtm", e
assert e["spreads"]["inversions"] == c["metrics"]["inversions"]["spread"]
cmps = [x for x in r["comparisons"] if x["workload"] == "rtm"]
assert cmps, "no comparisons of rtm"
for x in cmps:
    assert x["threshold_source"] in ("default", "calibration"), x
    if x["metric"] in e["spreads"]:
        assert x["aa_spread"] == e["spreads"][x["metric"]], x
        assert x["threshold"] >= x["aa_spread"] * e["multiple"] - 1e-9, x
    if x["threshold_source"] == "calibration":
        assert x["threshold"] == x["aa_spread"] * e["multiple"], x
# The job names no noise_limit_pct: its limit derives from the calibration
# runs' p90 vCPU wait, min(25, max(10, 2 x p90)).
rep = r["repeats"]
assert e["vcpu_wait_pct_p90"] == c["vcpu_wait_pct_p90"], e
assert rep["noise_limit_source"] == "calibration", rep
assert rep["calibration_vcpu_wait_pct_p90"] == c["vcpu_wait_pct_p90"], rep
want = min(25.0, max(10.0, 2 * c["vcpu_wait_pct_p90"]))
assert abs(rep["noise_limit_pct"] - want) < 1e-9, (rep["noise_limit_pct"], want)
def num(x):
    return isinstance(x, (int, float))
# compare/noise.h: a wait over the limit while others took over 10 %, or
# others over 40 % whatever the wait
for v in r["variants"].values():
    for run in v["runs"]:
        hi = run.get("host_interference") or {}
        w, o = hi.get("vcpu_wait_pct"), hi.get("others_busy_pct")
        if num(w):
            noisy = (w > want and not (num(o) and o <= 10)) or (num(o) and o > 40)
            assert run["noisy"] == noisy, (run["key"], hi, run["noisy"])
print(f"noise limit {rep['noise_limit_pct']:.3g} % from the calibration's p90 wait "
      f"{c['vcpu_wait_pct_p90']:.3g} %")
inv = [x for x in cmps if x["metric"] == "inversions"][0]
print("after calibration: inversions threshold", inv["threshold"], "from", inv["threshold_source"],
      "A/A spread", inv["aa_spread"], "verdict", inv["verdict"])
PY
grep -q "^noise limit: a run whose vCPUs waited over .* (from the A/A calibration" run.out ||
	{ cat run.out; e2e_fail "the summary does not name the calibrated noise limit"; }

# 4. a job that names its own limit keeps it, beside the calibration
python3 - job.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["noise_limit_pct"] = 60
j["repeat"] = 1
json.dump(j, open("job-own.json", "w"))
PY
"$SCHEDLAB" run job-own.json --cache-dir cache --job-dir own-job -o own.json -q >own.out 2>own.err ||
	[ $? -ne 2 ] || { cat own.out own.err; e2e_fail "schedlab run (own limit) exited 2"; }
python3 - own.json <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))["repeats"]
assert rep["noise_limit_source"] == "job" and rep["noise_limit_pct"] == 60, rep
assert "calibration_vcpu_wait_pct_p90" not in rep, rep
PY
echo "ok: calibrate stored a calibration and the next job named it"
