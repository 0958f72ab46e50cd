#!/usr/bin/env bash
# Issue #5, the high-resolution preemption tick (seed 010), end to end in
# short form: 3 slice threads on one CPU, NO_HRTICK against HRTICK. The
# HRTICK variant's slice_us.max is below NO_HRTICK's, with verdict improved.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_run_example hrtick.json hrtick-short \
	'j["repeat"] = 2; j["workloads"][0]["args"] = ["--threads", "3", "--seconds", "3", "--cpu", "1", "--gap-us", "500"]'
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for v in ("no-hrtick", "hrtick"):
    for run in r["variants"][v]["runs"]:
        assert run["status"] == "ok", f"{v} {run['key']}: {run['status']}: {run.get('reason')}"
        m = run["workloads"][0]["metrics"]
        print(v, {k: round(x, 1) for k, x in m.items()})
c = [c for c in r["comparisons"] if c["variant"] == "hrtick" and c["metric"] == "slice_us.max"][0]
print("slice_us.max:", c["baseline"]["median"], "->", c["candidate"]["median"], c["verdict"], c["ci95"])
assert c["candidate"]["median"] < c["baseline"]["median"]
assert c["verdict"] == "improved"
PY
