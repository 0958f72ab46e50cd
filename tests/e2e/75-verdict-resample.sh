#!/usr/bin/env bash
# tier: host
# false-failure rate: 0 (deterministic: the replays use --seed 1 on pools whose
# answers are fixed by construction: all-zero A/A, 6-9 against 0).
# bench/verdict-resample.sh replays simulated jobs through the production
# decision rule from stored results. Built here from the example result: an
# A/A pass whose runs all count 0 inversions (no false positive is possible:
# every A/A job must come out unchanged), a planted pass whose candidate runs
# count 6 to 9 (every job must be detected at the first look of 5), and a
# "planted" pass whose candidate is the baseline again (nothing may be
# detected, nothing may fail). Then bench/verdict-peers.sh replays the peers'
# rules on the same pools, and on an A/A pool of constant cyclictest
# averages whose shifted candidates have known answers. Runs in seconds, no
# guest.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need python3
e2e_tmpdir
cd "$E2E_TMP"
python3 - "$E2E_ROOT/tests/data/result-example.json" <<'PY'
import copy, json, os, sys
ex = json.load(open(sys.argv[1]))
ex["job"]["repeat"] = {"min": 5, "max": 12}
ex["job"]["gates"] = [{"workload": "rt-migrate-test", "metric": "inversions", "threshold": 1,
                       "relative": False}]
def runs(side, values):
    out = []
    for i, v in enumerate(values):
        r = copy.deepcopy(ex["variants"][side]["runs"][i % 2])
        r["key"] = "%s#%d" % (side, i)
        r["repeat"] = i
        for w in r["workloads"]:
            if w["name"] == "rt-migrate-test":
                w["metrics"]["inversions"] = v
        out.append(r)
    return out
def result(base, cand):
    r = copy.deepcopy(ex)
    r["variants"]["baseline"]["runs"] = runs("baseline", base)
    r["variants"]["patched"]["runs"] = runs("patched", cand)
    return r
for d, aa, planted in (("real", [0] * 6, [6, 7, 8, 9, 6, 8]), ("null", [0] * 6, [0] * 6)):
    os.makedirs(d)
    json.dump(result(aa, aa), open(d + "/aa-1-hog0.result.json", "w"))
    json.dump(result(aa, planted), open(d + "/planted-1-hog0.result.json", "w"))
# Every cyclictest average exactly 100 us, gated: a shift of s makes every
# candidate 100 (1 + s) against a baseline of 100s.
flat = copy.deepcopy(result([0] * 6, [0] * 6))
flat["job"]["gates"] = [{"workload": "cyclictest", "metric": "latency_us.avg", "threshold": 0.1,
                         "relative": True}]
for side in ("baseline", "patched"):
    for r in flat["variants"][side]["runs"]:
        for w in r["workloads"]:
            if w["name"] == "cyclictest":
                w["metrics"]["latency_us.avg"] = 100.0
os.makedirs("flat")
json.dump(flat, open("flat/aa-1-hog0.result.json", "w"))
PY
"$E2E_ROOT/bench/verdict-resample.sh" --jobs 60 --out real >real.txt
cat real.txt
grep -q "1 A/A jobs (12 runs), 1 planted jobs (6 candidate runs)" real.txt ||
	e2e_fail "the pools are not what the results hold"
grep -q "false positives 0 of 60: 0.00 %" real.txt || e2e_fail "an all-zero A/A pool gave a false positive"
grep -q "detected (fail) 60 of 60" real.txt || e2e_fail "a regression of 6 to 9 inversions was missed"
grep -q "5.0 runs a side on average; job verdicts: pass 0, fail 60" real.txt ||
	e2e_fail "the planted jobs did not stop at the first look"
"$E2E_ROOT/bench/verdict-resample.sh" --jobs 60 --out null >null.txt
cat null.txt
grep -q "detected (fail) 0 of 60" null.txt || e2e_fail "a candidate equal to its baseline was 'detected'"
# Bad input: a clear error, exit 2.
rc=0
"$E2E_ROOT/bench/verdict-resample.sh" --jobs 0 --out real 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--jobs needs an integer from 1 to 100000" err.txt || e2e_fail "--jobs 0 was not refused (exit $rc)"
rc=0
"$E2E_ROOT/bench/verdict-resample.sh" --hogs 4 --out real 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q "no A/A results with 4 hog" err.txt || e2e_fail "an empty pass was not refused (exit $rc)"
# The peers on the same pools: zero inversions on both sides can never be a
# change, 6 to 9 against 0 is one for every rule (lkp: min 6 above the
# middle 0; mmtests: zero-width intervals; Pinpoint: p 1e-5 at 10 a side;
# PerfCompare: p 0.008, delta 1; Firecracker: p 2/252 and far over 20 %).
"$E2E_ROOT/bench/verdict-peers.sh" --jobs 40 --workload rt-migrate-test --shifts none --out real >peers.txt
cat peers.txt
for rule in "lkp-tests" "mmtests" "Pinpoint" "PerfCompare" "Firecracker" "schedlab, 5 a side" "schedlab, adaptive"; do
	grep -Eq "^$rule +inversions +0\.0 % \[ +0\.0, +8\.8\] .*\| +100\.0 % \[ *91\.2, 100\.0\]" peers.txt ||
		e2e_fail "$rule: not 0 false changes and every planted job detected"
done
grep -Eq "^Pinpoint +inversions .* 10\.0 \| .* 10\.0$" peers.txt || e2e_fail "Pinpoint did not decide at its first 10 runs a side"
"$E2E_ROOT/bench/verdict-peers.sh" --jobs 40 --workload rt-migrate-test --shifts none --out null >peers-null.txt
grep -Eq "^mmtests +inversions .*\| +0\.0 % " peers-null.txt || e2e_fail "mmtests 'detected' a candidate equal to its baseline"
# Shifted constants: every rule with a significance test sees a +20 % shift
# of identical values, except Firecracker, whose change must exceed 20 % of
# the baseline mean (20 is not more than 20; 30 is).
"$E2E_ROOT/bench/verdict-peers.sh" --jobs 20 --workload cyclictest --shifts 20,30 --out flat >flat.txt
cat flat.txt
grep -Eq "^  +20 % +[0-9.]+ % \(pass +[0-9.]+\) +[0-9.]+ % \(pass +[0-9.]+\) +100\.0 % \(pass +0\.0\) +100\.0 % \(pass +0\.0\) +100\.0 % \(pass +0\.0\) +100\.0 % \(pass +0\.0\) +0\.0 % \(pass 100\.0\)$" flat.txt ||
	e2e_fail "at +20 % the peers' answers on constant values are not lkp/mmtests/Pinpoint/PerfCompare changed, Firecracker same"
grep -Eq "^  +30 % .* 100\.0 % \(pass +0\.0\)$" flat.txt || e2e_fail "Firecracker missed a +30 % change of constant values"
grep -Eq "^schedlab, 5 a side +latency_us\.avg +0\.0 % " flat.txt || e2e_fail "schedlab called identical values changed"
rc=0
"$E2E_ROOT/bench/verdict-peers.sh" --shifts 0 --out real 2>err.txt || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "bad --shifts '0'" err.txt || e2e_fail "--shifts 0 was not refused (exit $rc)"
echo "ok"
