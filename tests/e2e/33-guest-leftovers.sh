#!/usr/bin/env bash
# Cleanup destroys leftover domains with schedlab's prefix and no others, and
# refuses a prefix that is not schedlab's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
e2e_need_schedlab
e2e_need virsh
e2e_virsh version >/dev/null 2>&1 || e2e_skip "libvirtd is not running (scripts/setup.sh starts it)"
e2e_tmpdir
cd "$E2E_TMP"
v() { e2e_virsh -q "$@"; }
stale="schedlab-stale-$$"
other="e2e-other-$$"
cleanup() { v destroy "$other" >/dev/null 2>&1 || true; v destroy "$stale" >/dev/null 2>&1 || true; }
trap 'cleanup; _e2e_cleanup' EXIT
for n in "$stale" "$other"; do
	# No disk and no kernel: it would sit in the firmware; paused, it costs nothing.
	cat >"$n.xml" <<XML
<domain type='qemu'><name>$n</name><memory unit='MiB'>32</memory>
<os><type arch='x86_64'>hvm</type></os><devices><memballoon model='none'/></devices></domain>
XML
	v create --paused "$n.xml" >/dev/null
done
v list --name | grep -qx "$stale" || e2e_fail "could not create $stale"

rc=0
"$SCHEDLAB" guest cleanup --prefix e2e- >out.txt 2>&1 || rc=$?
[ "$rc" -ne 0 ] || e2e_fail "a prefix without 'schedlab-' was accepted: $(cat out.txt)"
v list --name | grep -qx "$other" || e2e_fail "$other was destroyed by a refused cleanup"

"$SCHEDLAB" guest cleanup --prefix "schedlab-stale-$$" | tee out.txt
grep -q "destroyed 1 domain" out.txt || e2e_fail "expected one domain destroyed"
! v list --name | grep -qx "$stale" || e2e_fail "$stale is still running"
v list --name | grep -qx "$other" || e2e_fail "$other, not schedlab's, was destroyed"
echo "ok"
