#!/usr/bin/env bash
# Garbage and broken frames on the results port (crashme garbage) make the run
# "error" with a reason, while the real frames after them are still read.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
k=$E2E_KERNEL
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-garbage-$$"
cat >plan.json <<JSON
{"run_id": "$id", "features": [],
 "workloads": [{"name": "crashme", "argv": ["/usr/bin/crashme", "garbage"], "timeout_s": 60, "uid": 0}]}
JSON
rc=0
timeout 150 "$SCHEDLAB" guest run --kernel "$k" --plan plan.json --deadline 90 -o outcome.json >/dev/null || rc=$?
echo "guest run: exit $rc"
[ "$rc" -eq 1 ] || e2e_fail "expected exit 1 (the guest failed), got $rc"
python3 - outcome.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("status", o["status"], "reason", o["reason"])
assert o["status"] == "error", o["status"]
assert "unreadable frame" in o["reason"], o["reason"]
kinds = [f["kind"] for f in o["frames"]]
assert kinds == ["hello", "workload", "summary"], kinds   # the good frames survive the junk
PY
echo "ok"
