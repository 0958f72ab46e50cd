#!/usr/bin/env bash
# A kernel panic in the guest (crashme panic: sysrq 'c') ends the run at once
# with status "panic" and a console excerpt holding the panic line.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
k=$E2E_KERNEL
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-panic-$$"
cat >plan.json <<JSON
{"run_id": "$id", "features": [],
 "workloads": [{"name": "crashme", "argv": ["/usr/bin/crashme", "panic"], "timeout_s": 60, "uid": 0}]}
JSON
start=$(date +%s)
rc=0
timeout 150 "$SCHEDLAB" guest run --kernel "$k" --plan plan.json --deadline 90 \
	--console-log console.log -o outcome.json >/dev/null || rc=$?
took=$(( $(date +%s) - start ))
echo "guest run: exit $rc in $took s"
[ "$rc" -eq 1 ] || e2e_fail "expected exit 1 (the guest failed), got $rc"
[ "$took" -lt 60 ] || e2e_fail "a panic took $took s to notice: it should end the domain at once"
python3 - outcome.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
print("status", o["status"], "reason", o["reason"])
assert o["status"] == "panic", (o["status"], o["reason"])
assert "Kernel panic - not syncing" in o["reason"], o["reason"]
ev = [e for e in o["kernel_events"] if e["kind"] == "panic"]
assert ev, o["kernel_events"]
assert "Kernel panic - not syncing" in ev[0]["line"]
assert "Kernel panic - not syncing" in ev[0]["excerpt"]
assert len(ev[0]["excerpt"].splitlines()) > 3        # lines around it, not just the line
assert "Kernel panic - not syncing" in o["console_excerpt"]
PY
grep -q "Kernel panic - not syncing" console.log || e2e_fail "the console log misses the panic"
# After a power-off libvirt finishes tearing QEMU down on its own (1-2 s).
for _ in $(seq 1 50); do
	e2e_virsh list --name | grep -qx "schedlab-$id" || break
	sleep 0.2
done
! e2e_virsh list --name | grep -qx "schedlab-$id" || e2e_fail "domain schedlab-$id was left running"
echo "ok"
