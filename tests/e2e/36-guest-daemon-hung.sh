#!/usr/bin/env bash
# A libvirtd that stops answering (here: SIGSTOP, as its main loop does in the
# libvirt 9.0 teardown deadlock, docs/guests.md) is an infrastructure error,
# never a hang of the guest's kernel and never a wait without end:
#   - a run in progress fails once the connection's keepalive gives up
#     (about 15-20 s), saying the daemon stopped answering;
#   - a new connection fails after SCHEDLAB_LIBVIRT_TIMEOUT_S, saying the
#     daemon is most likely hung;
#   - once the daemon runs again, the guest of the lost connection is gone
#     (it was started with AUTODESTROY) and the daemon serves again.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_guest
e2e_tmpdir
cd "$E2E_TMP"
daemon=$(pidof libvirtd || true)
[ -n "$daemon" ] || e2e_skip "no libvirtd process to stop (a socket-activated or modular daemon)"
[ "$(wc -w <<<"$daemon")" -eq 1 ] || e2e_skip "more than one libvirtd: $daemon"
# Whatever happens, the daemon runs again when this test ends.
trap 'kill -CONT "$daemon" 2>/dev/null || true; _e2e_cleanup' EXIT

id="e2e-hung-daemon-$$"
e2e_guest_hanging "$id"
pid=$E2E_GUEST_PID

kill -STOP "$daemon"
start=$(date +%s)
rc=0
for _ in $(seq 1 90); do kill -0 $pid 2>/dev/null || break; sleep 1; done
if kill -0 $pid 2>/dev/null; then
	kill -KILL $pid
	e2e_fail "guest run still waited 90 s after libvirtd stopped answering"
fi
wait $pid || rc=$?
took=$(( $(date +%s) - start ))
echo "run in progress: exit $rc $took s after SIGSTOP: $(cat err.txt)"
[ "$rc" -eq 2 ] || e2e_fail "expected exit 2 (schedlab could not run it), got $rc"
grep -q "was lost while the guest 'schedlab-$id' ran: the daemon stopped answering" err.txt ||
	e2e_fail "the message does not say the daemon stopped answering"
! grep -q '"status"' out.json || e2e_fail "an outcome was printed for a run the host lost: $(cat out.json)"

# A new connection to the stopped daemon.
start=$(date +%s)
rc=0
SCHEDLAB_LIBVIRT_TIMEOUT_S=3 timeout 60 "$SCHEDLAB" guest cleanup --prefix schedlab-e2e-none- \
	>/dev/null 2>err2.txt || rc=$?
took=$(( $(date +%s) - start ))
echo "new connection: exit $rc after $took s: $(cat err2.txt)"
[ "$rc" -ne 124 ] || e2e_fail "the connect did not give up"
[ "$rc" -ne 0 ] || e2e_fail "a connect to a stopped daemon succeeded"
[ "$took" -le 15 ] || e2e_fail "the connect took $took s against a 3 s bound"
grep -q "did not answer within 3 s" err2.txt || e2e_fail "the message does not give the bound"
grep -q "most likely hung" err2.txt || e2e_fail "the message does not say the daemon looks hung"

kill -CONT "$daemon"
for _ in $(seq 1 150); do
	e2e_virsh list --name 2>/dev/null | grep -qx "schedlab-$id" || break
	sleep 0.2
done
! e2e_virsh list --name | grep -qx "schedlab-$id" ||
	e2e_fail "the domain schedlab-$id outlived its connection"
e2e_virsh version >/dev/null || e2e_fail "libvirtd does not serve after SIGCONT"
echo "ok"
