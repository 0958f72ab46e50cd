#!/usr/bin/env bash
# A guest that never finishes (crashme hang with a long workload timeout) is
# destroyed at its short deadline and reported "hung" in bounded time; the
# CLI exits normally and no domain is left.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
k=$E2E_KERNEL
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-hang-$$"
cat >plan.json <<JSON
{"run_id": "$id", "features": [],
 "workloads": [{"name": "crashme", "argv": ["/usr/bin/crashme", "hang"], "timeout_s": 3600, "uid": 0}]}
JSON
deadline=20
start=$(date +%s)
rc=0
timeout 120 "$SCHEDLAB" guest run --kernel "$k" --plan plan.json --deadline $deadline \
	-o outcome.json >/dev/null || rc=$?
took=$(( $(date +%s) - start ))
echo "guest run: exit $rc in $took s"
[ "$rc" -eq 1 ] || e2e_fail "expected exit 1 (the guest failed), got $rc"
# The deadline counts from resume; QEMU start and teardown add a few seconds.
[ "$took" -lt $((deadline + 30)) ] || e2e_fail "took $took s for a $deadline s deadline"
python3 - outcome.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("status", o["status"], "reason", o["reason"])
assert o["status"] == "hung", o["status"]
assert "deadline" in o["reason"], o["reason"]
assert [f["kind"] for f in o["frames"]] == ["hello"], o["frames"]
assert "running workload 0 'crashme'" in o["console_excerpt"], o["console_excerpt"][-1500:]
PY
# After a power-off libvirt finishes tearing QEMU down on its own (1-2 s).
for _ in $(seq 1 50); do
	e2e_virsh list --name | grep -qx "schedlab-$id" || break
	sleep 0.2
done
! e2e_virsh list --name | grep -qx "schedlab-$id" || e2e_fail "domain schedlab-$id was left running"
echo "ok"
