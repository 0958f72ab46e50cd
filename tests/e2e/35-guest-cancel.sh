#!/usr/bin/env bash
# Cancelling a run (SIGTERM to 'schedlab guest run', which polls it through
# guest_spec.cancelled) destroys the domain at once and reports it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
k=$E2E_KERNEL
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-cancel-$$"
cat >plan.json <<JSON
{"run_id": "$id", "features": [],
 "workloads": [{"name": "crashme", "argv": ["/usr/bin/crashme", "hang"], "timeout_s": 3600, "uid": 0}]}
JSON
"$SCHEDLAB" guest run --kernel "$k" --plan plan.json --deadline 600 --console-log console.log \
	>out.json 2>err.txt &
pid=$!
# Wait until the workload runs inside the guest.
for _ in $(seq 1 300); do
	grep -q "running workload 0 'crashme'" console.log 2>/dev/null && break
	kill -0 $pid 2>/dev/null || e2e_fail "guest run ended early: $(cat err.txt)"
	sleep 0.2
done
grep -q "running workload 0 'crashme'" console.log || { kill $pid; e2e_fail "the workload never started"; }
start=$(date +%s)
kill -TERM $pid
rc=0
wait $pid || rc=$?
took=$(( $(date +%s) - start ))
echo "guest run: exit $rc $took s after SIGTERM: $(cat err.txt)"
[ "$rc" -eq 2 ] || e2e_fail "expected exit 2 (cancelled), got $rc"
[ "$took" -le 10 ] || e2e_fail "cancel took $took s"
grep -q "cancelled" err.txt || e2e_fail "the message does not say it was cancelled"
! virsh -c qemu:///system list --name | grep -qx "schedlab-$id" || e2e_fail "domain schedlab-$id was left running"
echo "ok"
