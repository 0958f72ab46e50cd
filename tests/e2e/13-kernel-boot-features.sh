#!/usr/bin/env bash
# Boots the schedlab kernel (e2e_kernel) in QEMU (TCG, 2 vCPUs) with a tiny
# static test init, and checks that /sys/kernel/debug/sched/features lists the
# four schedlab features on by default, that NO_<feature> switches each off
# and back on, that an unknown feature is refused, and that the guest powers
# off by itself (ACPI). The product's guests use libvirt; this is the kernel's
# own check, without libvirt, the agent or busybox.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
e2e_need qemu-system-x86_64 gcc cpio gzip timeout
e2e_tmpdir
bz=$(e2e_kernel) || e2e_fail "no kernel"
[ -s "$bz" ] || e2e_fail "e2e_kernel printed '$bz'"

mkdir -p "$E2E_TMP/root"
gcc -static -O2 -o "$E2E_TMP/root/init" "$E2E_ROOT/tests/data/kernel-boot/init.c" ||
	e2e_skip "cannot link a static test init (libc6-dev static libraries missing?)"
(cd "$E2E_TMP/root" && echo init | cpio -o -H newc --quiet) | gzip -9 >"$E2E_TMP/initrd.gz"

start=$(date +%s)
rc=0
timeout 180 qemu-system-x86_64 -accel tcg,thread=multi -smp 2 -m 256 -nographic -no-reboot \
	-kernel "$bz" -initrd "$E2E_TMP/initrd.gz" \
	-append "console=ttyS0 panic=-1 rdinit=/init" </dev/null >"$E2E_TMP/console.txt" 2>&1 || rc=$?
secs=$(( $(date +%s) - start ))
tr -d '\r' <"$E2E_TMP/console.txt" >"$E2E_TMP/c.txt"
grep SCHEDLAB-TEST "$E2E_TMP/c.txt" || true
[ "$rc" -eq 0 ] || { tail -n 40 "$E2E_TMP/c.txt"; e2e_fail "qemu exit $rc after ${secs}s (124 = did not power off)"; }
grep -q "SCHEDLAB-TEST done" "$E2E_TMP/c.txt" || { tail -n 40 "$E2E_TMP/c.txt"; e2e_fail "the test init did not finish"; }
grep -q "SCHEDLAB-TEST cpus: 2" "$E2E_TMP/c.txt" || e2e_fail "the guest does not see 2 CPUs"

line() { sed -n "s/^SCHEDLAB-TEST $1: //p" "$E2E_TMP/c.txt"; }
for f in RT_PUSH RT_WAKEUP_PLACE RT_PULL RT_CPUPRI; do
	line features | tr ' ' '\n' | grep -qx "$f" || e2e_fail "'$f' is not on by default: $(line features)"
	line after-off | tr ' ' '\n' | grep -qx "NO_$f" || e2e_fail "'NO_$f' did not stick: $(line after-off)"
	line after-on | tr ' ' '\n' | grep -qx "$f" || e2e_fail "'$f' did not come back: $(line after-on)"
	grep -q "SCHEDLAB-TEST write NO_$f: ok" "$E2E_TMP/c.txt" || e2e_fail "writing NO_$f failed"
done
grep -q "SCHEDLAB-TEST write NO_SCHEDLAB_NOT_A_FEATURE: failed" "$E2E_TMP/c.txt" || e2e_fail "an unknown feature was accepted"
# stock 6.1 features are still there, HRTICK off by default
line features | tr ' ' '\n' | grep -qx NO_HRTICK || e2e_fail "HRTICK should default to off"
grep -Eq "Kernel panic|BUG:|WARNING:" "$E2E_TMP/c.txt" && e2e_fail "the kernel log shows a panic, BUG or WARNING"
echo "ok: booted and powered off in ${secs}s"
