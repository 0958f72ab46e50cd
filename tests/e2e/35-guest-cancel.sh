#!/usr/bin/env bash
# Cancelling a run (SIGTERM to 'schedlab guest run', which polls it through
# guest_spec.cancelled) destroys the domain at once and reports it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"
id="e2e-cancel-$$"
e2e_guest_hanging "$id"
pid=$E2E_GUEST_PID
start=$(date +%s)
kill -TERM $pid
rc=0
wait $pid || rc=$?
took=$(( $(date +%s) - start ))
echo "guest run: exit $rc $took s after SIGTERM: $(cat err.txt)"
[ "$rc" -eq 2 ] || e2e_fail "expected exit 2 (cancelled), got $rc"
[ "$took" -le 10 ] || e2e_fail "cancel took $took s"
grep -q "cancelled" err.txt || e2e_fail "the message does not say it was cancelled"
! e2e_virsh list --name | grep -qx "schedlab-$id" || e2e_fail "domain schedlab-$id was left running"
echo "ok"
