#!/usr/bin/env bash
# timeout: 2700
# false-failure rate: ≤ 1/1000, estimated, not measured (why: documented 6.12
# short runs: baseline 7 to 15 a repeat and one CI repeat of 0 in 14, patched
# 0 to 2 (3 and 4 only under a loaded host). `improved` (gate threshold 0) at
# adaptive 6:12 (looks 6, 9, 12 at p ≤ 0.0167 each): 6 v 6 decide with up to
# 3 of 36 pairs out of order (p 0.015; CI's [0, 9, 8, 3] against [0, 0, 0,
# 0, 1, 2] gave 0.026, so 9 a side then). The data checks are on medians, so one stray boot cannot fail
# them: the patched median at most half the baseline's (was "at most 2",
# which the documented full example's [2, 1, 3, 3, 1, 3] would fail), the
# baseline's median at least 3, at most one repeat in six without an
# inversion. Cost: nothing when decided at 6 (as before); 6 boots (~3 min)
# when the first look does not decide, 12 at most.)
# The Linux 6.12 base end to end: builds guest-kernel/linux-6.12 (cold in CI)
# and runs the seed reproduction on it in short form
# (examples/seed-reproduction-6.12.json with rt-migrate-test -l 60, 6 to
# 12 repeats): the baseline (NO_RT_PUSH, NO_RT_WAKEUP_PLACE) shows inversions in
# all repeats but one in six, with a median of at least 3, the verdict on
# inversions is `improved`, and the patched median is at most half the
# baseline's (not 0 as on 6.1). At least six repeats: at 3 against 3 no split reaches p < 0.05
# (docs/statistics.md), so a fixed 3 could only ever be `inconclusive`, as it
# was in CI ([2, 7, 7] against [0, 0, 0]) while the test still passed; at 4
# a side only a complete separation does, and on 2026-12-06 CI's baseline came
# out [0, 9, 8, 3] (one run of 60 loops without an inversion, on a quiet host:
# vCPU wait 2.9 %), so the rule rightly said p 0.143, not `improved`. At 6 a
# side one such run still leaves p 0.026 against a patched [0, 0, 0, 0, 1, 2]:
# above 6:12's 0.0167 a look, so such a job goes on to 9 a side.
# Both also set
# 6.12's EEVDF names (base_slice_ns, PLACE_LAG, RUN_TO_PARITY), which must
# apply. Then a job naming a 6.1 tunable (latency_ns) on this kernel must fail
# before any guest boots, with an error naming the tunable and the kernel.
# Timings here (2 cores, TCG, 2026-12-04): the cold 6.12 build took 49 min 43 s
# under load 9-11 from other kernel builds (1181 objects; about 13-14 min on a
# quiet 2-core machine, estimated in guest-kernel/linux-6.12/README.md); with
# the kernel cached the test took 168 s and 176 s at load 4-5 (6 runs + 2
# reruns of noisy ones: baseline inversions [10, 11, 14, 7] and [11, 13, 9,
# 15], patched [2, 2, 0, 0] and [1, 0, 0, 1]).
# Under heavier load (another job's guests beside it) the patched kernel
# showed [2, 0, 3, 1, 4, 3]: the vCPUs waited 30-38 % for a host CPU.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_need_guest
start=$(date +%s)
e2e_run_example seed-reproduction-6.12.json seed-612 '
j["repeat"] = {"min": 6, "max": 12}
j["workloads"][0]["args"] = ["-p", "60", "-l", "60", "3"]
j["workloads"][0]["timeout_s"] = 90
j["workloads"] = j["workloads"][:1]
for v in j["variants"].values():
    v["sched_tunables"] = {"base_slice_ns": 3000000}
    v["features"] = v["features"] + ["PLACE_LAG", "RUN_TO_PARITY"]
'
echo "seed reproduction on 6.12 (build included): $(( $(date +%s) - start )) s"
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k = r["kernels"]["sched"]
assert k["source"] == "debian:linux-source-6.12", k["source"]
assert k["source_version"].startswith("6.12."), k["source_version"]
def inversions(variant):
    vals = []
    for run in r["variants"][variant]["runs"]:
        assert run["status"] == "ok", f"{variant} {run['key']}: {run['status']}: {run.get('reason')}"
        assert "6.12." in run.get("guest_kernel", ""), run.get("guest_kernel")
        for f in ("PLACE_LAG", "RUN_TO_PARITY"):
            assert f in run["features_applied"], (f, run["features_applied"])
        w = [w for w in run["workloads"] if w["name"] == "rt-migrate-test"][0]
        vals.append(w["metrics"]["inversions"])
    return vals
base, patched = inversions("baseline"), inversions("patched")
print("baseline inversions per repeat:", base)
print("patched inversions per repeat: ", patched)
assert 6 * sum(v == 0 for v in base) <= len(base), "the baseline must show inversions in all repeats but one in six"
assert sorted(base)[len(base) // 2 - 1] >= 3, "the baseline's median must be at least 3 inversions"
# On 6.12 push does not bring the count to 0 as it does on 6.1 (e2e 40): the
# full example gave patched [2, 1, 3, 3, 1, 3] against baseline [12, 17, 16,
# 17, 15, 17] at low load. So the median must be at most half the
# baseline's, and the verdict say the patched kernel is better.
pmed, bmed = sorted(patched)[len(patched) // 2], sorted(base)[len(base) // 2 - 1]
assert 2 * pmed <= bmed, f"the patched median {pmed} must be at most half the baseline's {bmed}"
c = [c for c in r["comparisons"] if c["variant"] == "patched" and c["metric"] == "inversions"][0]
print("verdict on inversions:", c["verdict"], "ci95", c["ci95"])
assert c["verdict"] == "improved", c["verdict"]
PY

# A 6.1 (CFS) tunable on 6.12: refused once the kernel is known, no guest boots.
python3 - "$E2E_TMP/job.json" "$E2E_TMP/bad.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["name"] = "cfs-tunable-on-612"
j["variants"]["patched"]["sched_tunables"] = {"base_slice_ns": 3000000, "latency_ns": 6000000}
json.dump(j, open(sys.argv[2], "w"))
PY
e2e_run_refused "$E2E_TMP/bad.json" bad
grep -q "sched tunable 'latency_ns'" "$E2E_TMP/bad.out" || e2e_fail "the error does not name latency_ns"
grep -q "linux-source-6.12, 6.12\." "$E2E_TMP/bad.out" || e2e_fail "the error does not name the kernel"
grep -q "base_slice_ns" "$E2E_TMP/bad.out" || e2e_fail "the error does not list the kernel's tunables"
echo "ok: 6.12 seed reproduction and the 6.1-tunable error, $(( $(date +%s) - start )) s in all"
