#!/usr/bin/env bash
# false-failure rate: ≤ 1/1000, estimated, not measured (why: the gated
# slice_overrun_us.mean must be `improved`; HRTICK's effect was complete in
# both documented CI runs (the mean slice 7020 -> 4044 us in every run), and
# adaptive 5:8 gives an undecided gate 3 more rounds at p ≤ 0.025 a look
# instead of failing. The other checks cannot fail on one stray boot: medians
# lower, and max and p99 overrun "not regressed" (HRTICK moves them the better
# way, so a false regression needs p ≤ 0.025 against the true effect). The
# ungated p50 overrun was asserted `improved`, i.e. p ≤ alpha at whatever n
# the gate stopped: now its median must be lower and it not regressed, the
# gate being the decided claim. Cost: 6 boots (~3 min) only when the gate is
# undecided at 5.)
# The high-resolution preemption tick (seed 010), end to end in
# short form: 3 slice threads on one CPU, NO_HRTICK against HRTICK. HRTICK
# ends slices on time, so the gated slice_overrun_us.mean comes out improved
# and the median overrun is lower; the mean slice and the median boot's 99th
# percentile slice are shorter. The verdicts on slice_us.max and the p99
# overrun are printed, not asserted beyond "not regressed": under TCG on a
# loaded 2-core host one emulation stall sets them. A CI run measured p99
# overrun 5292 -> 3775 us with per-run values from 348 to 5241 us under
# HRTICK (verdict unchanged), while the mean slice went 7020 -> 4044 us in
# every run. Another (2026-12-06) had HRTICK boots whose longest slice was
# 29.6 and 26.4 ms (a stalled vCPU), so the median boot's maximum came out
# 13.8 ms against 13.2 ms, while its 99th percentile slice went 9.5 -> 6.5 ms.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_run_example hrtick.json hrtick-short \
	'j["repeat"] = {"min": 5, "max": 8}; j["workloads"][0]["args"] = ["--threads", "3", "--seconds", "5", "--cpu", "1", "--gap-us", "500"]'
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in ("no-hrtick", "hrtick"):
    for run in r["variants"][v]["runs"]:
        assert run["status"] == "ok", f"{v} {run['key']}: {run['status']}: {run.get('reason')}"
        m = run["workloads"][0]["metrics"]
        print(v, {k: round(x, 1) for k, x in m.items()})
def cmp(metric):
    return [c for c in r["comparisons"] if c["variant"] == "hrtick" and c["metric"] == metric][0]
for m in ("slice_us.max", "slice_us.p99", "slice_us.mean", "slice_overrun_us.p99", "slice_overrun_us.p50", "slice_overrun_us.mean"):
    c = cmp(m)
    print(f"{m}: {c['baseline']['median']} -> {c['candidate']['median']} {c['verdict']} {c['ci95']}")
assert cmp("slice_us.mean")["candidate"]["median"] < cmp("slice_us.mean")["baseline"]["median"]
assert cmp("slice_overrun_us.mean")["verdict"] == "improved"
p50 = cmp("slice_overrun_us.p50")
assert p50["candidate"]["median"] < p50["baseline"]["median"] and p50["verdict"] != "regressed", p50
# The seed's claim on long slices, on the median boot's 99th percentile: a
# boot's single longest slice is one emulation stall's length under TCG.
assert cmp("slice_us.p99")["candidate"]["median"] < cmp("slice_us.p99")["baseline"]["median"]
for m in ("slice_us.max", "slice_overrun_us.p99"):
    assert cmp(m)["verdict"] != "regressed", f"{m} regressed under HRTICK"
PY
