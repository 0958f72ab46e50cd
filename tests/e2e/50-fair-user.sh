#!/usr/bin/env bash
# Fair per-user scheduling, end to end in short form: user 1000
# runs 1 hog and user 1001 runs 3 on one CPU. Without groups 1001 gets at
# least 0.65; with equal or 2:1 cpu_share groups each split is within 10% of
# the expected one (share_error <= 0.10).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_job.sh"
e2e_run_example fair-user.json fair-user-short \
	'j["repeat"] = 2; j["workloads"][0]["args"] = ["--uids", "1000:1,1001:3", "--seconds", "3", "--cpus", "0"]'
python3 - "$E2E_TMP/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def metrics(variant):
    out = []
    for run in r["variants"][variant]["runs"]:
        assert run["status"] == "ok", f"{variant} {run['key']}: {run['status']}: {run.get('reason')}"
        out.append(run["workloads"][0]["metrics"])
    return out
for m in metrics("no-groups"):
    print("no-groups:", {k: round(v, 3) for k, v in m.items()})
    assert m["cpu_fraction.1001"] >= 0.65, "without groups uid 1001 (3 hogs) must get >= 0.65"
for v in ("equal-shares", "weighted"):
    for m in metrics(v):
        print(f"{v}:", {k: round(val, 3) for k, val in m.items()})
        assert m["share_error"] <= 0.10, f"{v}: share_error {m['share_error']} > 0.10"
for m in metrics("weighted"):
    assert m["cpu_fraction.1000"] > 0.55, "cpu_share 2048 vs 1024 must give uid 1000 about 2/3"
PY
