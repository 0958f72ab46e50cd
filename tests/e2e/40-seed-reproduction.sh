#!/usr/bin/env bash
# The seed reproduction end to end, in short form (rt-migrate-test -l 60,
# adaptive repeat 5:8): real kernel, real guests, real rt-tests. Checks the
# seed's promise: the baseline shows priority inversions in all repeats but
# at most one, the patched scheduler at most one in the median repeat and
# never as many as the baseline's median (under nested TCG an isolated
# full-run inversion still shows with push on: 1 of 6 patched repeats of
# `make demo` had one, at 18.0 ms; docs/statistics.md), the verdict on
# `inversions` is `improved`, and the result validates against the schema
# (our validator and python3-jsonschema).
# false-failure rate: ≤ 1/1000, estimated, not measured (why: the 6.1 runs
# documented are few: baseline 5 to 18 inversions a repeat, never 0 in 12;
# patched 0 or 1 in 12, a 1 in about a quarter. The gate (threshold 0) is
# `improved` at p ≤ 0.025 a look at 5:8: 5 v 5 with one overlapping pair
# gives p 0.016, 8 v 8 far more, so it misses only if both looks do. The old
# per-run checks were the flaky part: "every baseline repeat > 0", "half the
# patched repeats 0" (with 1 patched repeat in 4 at one inversion, 3 of 4
# nonzero happens ~5 %) and "patched total < every baseline repeat" each
# failed on one or two stray boots. Each now needs several extreme boots at
# once: two baseline zeros, most patched repeats at 2 or more, or a patched
# repeat at the baseline's median. Cost: 2 boots (~50 s) more than the old
# fixed 4 when decided at 5, 8 more when not.)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_run_example seed-reproduction-short.json seed-short 'j["repeat"] = {"min": 5, "max": 8}'
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def inversions(variant):
    vals = []
    for run in r["variants"][variant]["runs"]:
        assert run["status"] == "ok", f"{variant} {run['key']}: {run['status']}: {run.get('reason')}"
        w = [w for w in run["workloads"] if w["name"] == "rt-migrate-test"][0]
        vals.append(w["metrics"]["inversions"])
    return vals
base, patched = inversions("baseline"), inversions("patched")
print("baseline inversions per repeat:", base)
print("patched inversions per repeat: ", patched)
assert sum(v == 0 for v in base) <= 1, "the baseline must show inversions in all repeats but one"
# "At most one in the median repeat" (the lower half of the sorted counts):
# 1 of 6 patched repeats of `make demo` had a real full-run inversion, so a
# zero median would fail on two such boots of five.
med = sorted(patched)[(len(patched) - 1) // 2]
assert med <= 1, f"the patched scheduler's median repeat must show at most one inversion, not {med}"
bmed = sorted(base)[len(base) // 2]
assert max(patched) < bmed, f"a patched repeat showed {max(patched)}, as many as the baseline's median {bmed}"
c = [c for c in r["comparisons"] if c["variant"] == "patched" and c["metric"] == "inversions"][0]
print("verdict on inversions:", c["verdict"], "ci95", c["ci95"])
assert c["verdict"] == "improved"
assert r["verdict"] == "pass", r.get("verdict_reasons")
assert r["environment"]["accelerator"] in ("kvm", "tcg")
order = r["order"]
assert order[0].split("#")[0] != order[1].split("#")[0], "variants must interleave"
PY
grep -q '<testsuite' "$E2E_TMP/junit.xml"
grep -q '<svg' "$E2E_TMP/report.html"
[ "$E2E_RUN_RC" -eq 0 ]
